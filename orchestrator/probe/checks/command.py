"""Command checks declared in a job spec (suite ``command``).

Each declared command becomes the check ``command.<id>``: its argv runs as a
list (never through a shell) with a timeout, in its own process group (killed
whole on timeout), with stdout and stderr going to temporary files so that a
chatty command cannot exhaust memory. The exit code and the regexes decide:

- argv[0] not on PATH (nor in the ROCm/CUDA tool directories) → ``unsupported``
- the command passed its timeout → ``timeout``
- wrong exit code, a ``stdout``/``stderr`` regex that does not match, or a
  ``stdout_not``/``stderr_not`` regex that does → ``fail`` (with the output tails)
- otherwise ``pass``.

Regexes use ``re.search`` with MULTILINE over the first MiB of each stream
(plus its tail when the stream is longer).
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import tempfile
import time
from typing import Any, Callable, Dict, List, Optional, Sequence

from ..context import Fail, Outcome, Report, Unsupported
from ..registry import Check, suite
from ._common import TOOL_DIRS, find_tool

suite("command", None,
      "Command checks declared in a job spec: suites: [{name: command, commands: [{id, argv: [...], "
      "exit_code: 0, stdout: [REGEX], stderr_not: [REGEX], feature, timeout}]}]. Each becomes "
      "command.<id>: argv runs as a list (no shell), missing argv[0] = unsupported, past its "
      "timeout = timeout, wrong exit code or regex = fail with the output tails.")

MAX_CAPTURE = 1 << 20  # bytes of each stream matched against the regexes
TAIL = 1500  # characters of each stream quoted in messages and logs


class TimedOut(Outcome):
    status = "timeout"


class HarnessError(Outcome):
    """The harness could not do its part: says nothing about the image."""
    status = "error"


def resolve(argv0: str) -> Optional[str]:
    if "/" in argv0:
        return argv0 if os.path.isfile(argv0) and os.access(argv0, os.X_OK) else None
    return find_tool(argv0)


def _read(fh: Any) -> Dict[str, Any]:
    fh.flush()
    size = os.fstat(fh.fileno()).st_size
    fh.seek(0)
    head = fh.read(MAX_CAPTURE).decode("utf-8", "replace")
    text = head
    if size > MAX_CAPTURE:
        fh.seek(max(MAX_CAPTURE, size - 64 * 1024))
        text = head + "\n[... %d bytes not shown ...]\n" % (size - MAX_CAPTURE) + fh.read().decode("utf-8", "replace")
    return {"text": text, "bytes": size, "tail": text[-TAIL:]}


def run_capped(argv: Sequence[str], timeout: float, cwd: Optional[str] = None,
               env: Optional[Dict[str, str]] = None) -> Dict[str, Any]:
    """Run argv (list) with a timeout; output to temp files, capped when read back.
    Returns returncode (None on timeout), stdout/stderr dicts, duration_s, timed_out."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.monotonic()
        proc = subprocess.Popen(list(argv), stdin=subprocess.DEVNULL, stdout=out, stderr=err, cwd=cwd,
                                env=env, start_new_session=True)
        timed_out = False
        try:
            rc = proc.wait(timeout=timeout)  # type: Optional[int]
        except subprocess.TimeoutExpired:
            timed_out = True
            rc = None
        _kill_group(proc.pid)  # whatever the command left behind in its group goes too
        if timed_out:
            proc.wait()
        return {"returncode": rc, "timed_out": timed_out, "duration_s": time.monotonic() - t0,
                "stdout": _read(out), "stderr": _read(err)}


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def tails(run: Dict[str, Any]) -> str:
    parts = []
    for name in ("stdout", "stderr"):
        tail = run[name]["tail"].rstrip()
        parts.append("--- %s (%d bytes%s) ---\n%s" % (name, run[name]["bytes"], ", tail" if tail != run[name]["text"].rstrip() else "",
                                                     tail or "(empty)"))
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
                problems.append("%s matches /%s/ (forbidden): %r" % (stream, pattern, m.group(0)[:200]))
    return problems


def command_fn(spec: Dict[str, Any]) -> Callable[[Any], Report]:
    argv = [str(a) for a in spec["argv"]]
    timeout = float(spec.get("timeout", 60.0))

    def fn(ctx: Any) -> Report:
        exe = resolve(argv[0])
        if exe is None:
            raise Unsupported("%s is not on PATH (nor in %s) in this image" % (argv[0], ", ".join(TOOL_DIRS)))
        try:
            run = run_capped([exe] + argv[1:], timeout)
        except OSError as exc:
            raise Fail("cannot execute %s: %s" % (exe, exc))
        shown = " ".join(argv)[:300]
        metrics = {"exit_code": run["returncode"], "stdout_bytes": run["stdout"]["bytes"],
                   "stderr_bytes": run["stderr"]["bytes"], "path": exe}
        log = "$ %s\n%s" % (shown, tails(run))
        if run["timed_out"]:
            raise TimedOut("%s passed its timeout of %gs and was killed\n%s" % (shown, timeout, tails(run)),
                           metrics, log=log)
        problems = judge(spec, run)
        if problems:
            raise Fail("%s: %s\n%s" % (shown, "; ".join(problems), tails(run)), metrics, log=log)
        checked = len(spec.get("stdout") or ()) + len(spec.get("stderr") or ())
        return Report("%s: exit code %s as expected; %d regex(es) matched in %.2fs"
                      % (shown, run["returncode"], checked, run["duration_s"]), metrics, log=log)

    return fn


def command_check(spec: Dict[str, Any]) -> Check:
    cid = "command.%s" % spec["id"]
    if not spec.get("argv"):
        raise ValueError("declared command %s has no argv" % cid)
    return Check(cid, command_fn(spec), spec.get("feature") or spec["id"], "command", "command",
                 version=int(spec.get("version", 1)),
                 description="runs %s; expects exit code %s" % (list(spec["argv"]), spec.get("exit_code", 0)))
