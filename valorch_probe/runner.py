"""Probe runner: the worker, and what it shares with the parent that supervises one worker
process at a time (``supervisor.py``); the command line is ``cli.py``.

The worker imports the suite's framework once and runs the checks in order, reporting each
on a private pipe, every line prefixed with the nonce the parent gave it. The probe ends with
``os._exit(0)`` once all is reported: a framework's teardown costs up to a second per suite
(docs/benchmarks.md, "Why the code is shaped for speed").
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time
import traceback
from typing import Any, Dict, Optional

from . import MARKER, hoststate, sandbox
from .context import Context, Outcome, Report
from .loader import select
from .registry import CHECKS, Check

FAILING = ("fail", "crash", "timeout")


def begin_mark(nonce: str) -> bytes:
    """What the worker writes on its stderr as each check begins, after that
    check's ``BEGIN`` on the protocol pipe. The two pipes are read in no fixed
    order, so the parent cuts a check's log at this mark in the stderr stream
    itself, never at the moment it happens to read ``BEGIN``."""
    return ("\n%s BEGIN\n" % nonce).encode()


def emit(stream: Any, obj: Dict[str, Any]) -> None:
    stream.write(MARKER + json.dumps(obj, sort_keys=True, default=str) + "\n")
    stream.flush()


def describe(chk: Check) -> Dict[str, Any]:
    # "library" is what evidence showed ran (set by Context.finish), never the
    # check's declared label: a result the parent records (crash, timeout) has none.
    return {
        "check": chk.id,
        "feature": chk.feature,
        "kind": chk.kind,
        "library": None,
        "version": chk.version,
        "unit": chk.unit,
        "bigger_is_better": chk.bigger_is_better,
    }


def scalar_metrics(metrics: Dict[str, Any]) -> Dict[str, Any]:
    """Metrics are scalars (numbers, strings, booleans); anything else a check
    reports (a list of devices, a dict) is kept as compact JSON text."""
    scalar = (bool, int, float, str, type(None))
    return {
        str(k): v if isinstance(v, scalar) else json.dumps(v, default=str, sort_keys=True)[:2000]
        for k, v in metrics.items()
    }


def run_check(chk: Check, ctx: Context, attempt: int) -> Dict[str, Any]:
    result = describe(chk)
    result["attempt"] = attempt
    host_before = hoststate.state()
    ctx.begin()
    t0 = time.perf_counter()
    said: Any = None  # the Report or Outcome: its log and further results
    try:
        report = chk.fn(ctx) or Report()
        result.update(
            status="pass",
            message=report.message,
            metrics=report.metrics,
            samples=[float(s) for s in report.samples],
        )
        if report.samples:  # a timed check: how loaded the host was around it
            result["metrics"] = dict(report.metrics, **hoststate.around(host_before))
        if report.unit:
            result["unit"] = report.unit
        said = report
    except Outcome as out:
        said = out
        result.update(status=out.status, message=out.message, metrics=out.metrics)
    except Exception as exc:  # the image's framework raised: the check failed
        result.update(
            status="fail",
            message="%s: %s" % (type(exc).__name__, str(exc)[:1000]),
            log=traceback.format_exc()[-4000:],
        )
    result["duration_s"] = time.perf_counter() - t0
    if said is not None:
        if said.log:
            result["log"] = said.log
        result["extra"] = list(said.extra)
    ctx.finish(result)  # device, evidence library, arch facts
    result["metrics"] = scalar_metrics(result.get("metrics") or {})
    return result


class Pipe:
    """The worker's side of its pipe to the parent: every line carries the nonce."""

    def __init__(self, stream: Any, nonce: str):
        self.stream = stream
        self.nonce = nonce

    def line(self, text: str) -> None:
        self.stream.write(self.nonce + " " + text + "\n")

    def flush(self) -> None:
        self.stream.flush()


def synced(proto: Pipe, ack_fd: Optional[int]) -> None:
    """Wait until the parent says it forwarded this check's results to the probe's
    stdout. Only then does the next check begin, so that nothing the next check does
    (a workload writing straight to the container's stdout through /proc/1/fd/1, a
    flood past the host's cap) can come before those results on that stream. An
    ended parent (EOF, an error) releases the worker: nothing waits forever here."""
    if ack_fd is None:
        return
    proto.line("SYNC")
    proto.flush()
    with contextlib.suppress(OSError):
        os.read(ack_fd, 1)


def worker(config: Dict[str, Any]) -> int:
    """The worker, forked from the parent (supervisor.Forked): the sandbox's settings (and
    what ``can_drop`` found) and a declared suite's checks come with the fork. So does the
    parent's non-dumpable flag; it is set again here, as this process's own guarantee."""
    sandbox.harden_self()
    sandbox.guard_worker()
    # The protocol goes to a private copy of the original stdout; anything the
    # framework or a check prints on fd 1 lands on stderr instead.
    proto = Pipe(os.fdopen(os.dup(1), "w"), str(config["nonce"]))
    os.dup2(2, 1)
    sys.stdout = sys.stderr

    s, _ = select(config["suite"])
    ctx = Context(config.get("expect"), config.get("device", "auto"))
    t0 = time.perf_counter()
    info: Dict[str, Any] = {
        "framework": s.framework,
        "framework_version": None,
        "import_error": None,
    }
    if s.framework:
        try:
            mod = ctx.load(s.framework)
            info["framework_version"] = str(getattr(mod, "__version__", ""))
        except Outcome as out:
            info["import_error"] = out.message
    info["import_s"] = time.perf_counter() - t0
    proto.line("READY " + json.dumps(info))
    proto.flush()

    attempts = int(config.get("attempts", 1))
    for cid in config["ids"]:
        chk = CHECKS[cid]
        attempt = int(config.get("first_attempt", {}).get(cid, 1))
        while True:
            proto.line("BEGIN %s %d" % (cid, attempt))
            proto.flush()
            sys.stderr.flush()
            os.write(2, begin_mark(str(config["nonce"])))
            res = run_check(chk, ctx, attempt)
            extra = res.pop("extra", None) or []
            proto.line("RESULT " + json.dumps(res, default=str))
            for more in extra:  # after the check's own result: the parent is done with it
                if more.get("check") not in config["ids"]:
                    more = dict({"kind": chk.kind, "feature": chk.feature, "version": 1}, **more)
                    more["attempt"] = attempt
                    proto.line("RESULT " + json.dumps(more, default=str))
            proto.flush()
            synced(proto, config.get("ack_fd"))
            if res["status"] not in FAILING or attempt >= attempts:
                break
            attempt += 1
    proto.flush()
    sys.stderr.flush()
    # Everything is reported: skip the interpreter's teardown, which for a
    # framework like torch is a large share of a short suite's wall time.
    os._exit(0)
