"""Command checks declared in a job spec (suite ``command``).

Each declared command becomes the check ``command.<id>``: its argv runs as a
list (never through a shell) with a timeout as an untrusted workload
(``sandbox``: an unprivileged user where one can be had, no inherited
descriptors, its own process group killed whole when it ends), its stdout and
stderr read from pipes and capped so that a chatty command cannot exhaust
memory or disk. The exit code and the regexes decide:

- argv[0] not on PATH (nor in the ROCm/CUDA tool directories) → ``unsupported``
- the command passed its timeout → ``timeout``
- wrong exit code, a ``stdout``/``stderr`` regex that does not match, or a
  ``stdout_not``/``stderr_not`` regex that does → ``fail`` (with the output tails)
- otherwise ``pass``.

Regexes use ``re.search`` with MULTILINE over the first MiB of each stream
(plus its tail when the stream is longer).
"""

from __future__ import annotations

import re
from typing import Any, Callable, Dict, List

from ..context import Fail, Report
from ..registry import Check, declared_fields, suite
from ..sandbox import run_workload
from ._common import tool_or_unsupported
from ._workload import OutOfMemory, TimedOut, resolve

suite(
    "command",
    None,
    "Command checks declared in a job spec: suites: [{name: command, commands: [{id, argv: [...], "
    "exit_code: 0, stdout: [REGEX], stderr_not: [REGEX], feature, timeout}]}]. Each becomes "
    "command.<id>: argv runs as a list (no shell), missing argv[0] = unsupported, past its "
    "timeout = timeout, wrong exit code or regex = fail with the output tails.",
)


def tails(run: Dict[str, Any]) -> str:
    parts = []
    for name in ("stdout", "stderr"):
        tail = run[name]["tail"].rstrip()
        parts.append(
            "--- %s (%d bytes%s) ---\n%s"
            % (
                name,
                run[name]["bytes"],
                ", tail" if tail != run[name]["text"].rstrip() else "",
                tail or "(empty)",
            )
        )
    return "\n".join(parts)


def judge(spec: Dict[str, Any], run: Dict[str, Any]) -> List[str]:
    """What is wrong with a finished command's outcome (empty: it passed)."""
    problems = []
    if run["returncode"] != int(spec.get("exit_code", 0)):
        problems.append("exit code %s, expected %s" % (run["returncode"], spec.get("exit_code", 0)))
    for stream in ("stdout", "stderr"):
        text = run[stream]["text"]
        for pattern in spec.get(stream) or ():
            if not re.search(pattern, text, re.MULTILINE):
                problems.append("%s does not match /%s/" % (stream, pattern))
        for pattern in spec.get(stream + "_not") or ():
            m = re.search(pattern, text, re.MULTILINE)
            if m:
                problems.append(
                    "%s matches /%s/ (forbidden): %r" % (stream, pattern, m.group(0)[:200])
                )
    return problems


def command_fn(spec: Dict[str, Any]) -> Callable[[Any], Report]:
    argv = [str(a) for a in spec["argv"]]
    timeout = float(spec.get("timeout", 60.0))

    def fn(ctx: Any) -> Report:
        exe = tool_or_unsupported(argv[0], resolve)
        try:  # an untrusted workload: sandbox.run_workload
            run = run_workload([exe, *argv[1:]], timeout)
        except OSError as exc:
            raise Fail("cannot execute %s: %s" % (exe, exc)) from exc
        shown = " ".join(argv)[:300]
        metrics = {
            "exit_code": run["returncode"],
            "stdout_bytes": run["stdout"]["bytes"],
            "stderr_bytes": run["stderr"]["bytes"],
            "path": exe,
            "user": run["user"],
        }
        log = "$ %s\n%s" % (shown, tails(run))
        if run["timed_out"]:
            raise TimedOut(
                "%s passed its timeout of %gs and was killed\n%s" % (shown, timeout, tails(run)),
                metrics,
                log=log,
            )
        if run.get("out_of_memory"):
            raise OutOfMemory(
                "%s: %s\n%s" % (shown, run["out_of_memory"], tails(run)), metrics, log=log
            )
        problems = judge(spec, run)
        if problems:
            raise Fail("%s: %s\n%s" % (shown, "; ".join(problems), tails(run)), metrics, log=log)
        checked = len(spec.get("stdout") or ()) + len(spec.get("stderr") or ())
        return Report(
            "%s: exit code %s as expected; %d regex(es) matched in %.2fs"
            % (shown, run["returncode"], checked, run["duration_s"]),
            metrics,
            log=log,
        )

    return fn


def command_check(spec: Dict[str, Any]) -> Check:
    if not spec.get("argv"):
        raise ValueError("declared command command.%s has no argv" % spec["id"])
    fields = declared_fields("command", spec)
    return Check(fn=command_fn(spec), suite="command", **fields)
