"""Probe runner: a parent that supervises one worker process at a time.

The worker imports the suite's framework once and runs the checks in order,
reporting each on a private pipe. If a check kills the worker (segfault,
abort) or passes its deadline, the parent records ``crash`` / ``timeout`` for
that check with the tail of the worker's output, then starts a fresh worker
for the checks that remain. Only the parent writes to stdout, one JSON object
per line behind ``MARKER``.

Commands::

    python3 -m valorch_probe run --suite smoke [--check GLOB]... [--expect JSON]
                                 [--deadline S] [--import-timeout S] [--device auto|cpu]
                                 [--attempts N] [--declare JSON]
    python3 -m valorch_probe list            # the registry as JSON
    python3 -m valorch_probe inventory [--root DIR] [--no-commands] [--no-torch]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import selectors
import signal
import subprocess
import sys
import time
import traceback
from typing import Any, Dict, List

from . import MARKER, PROBE_VERSION, hoststate
from .context import Context, Outcome, Report
from .registry import CHECKS, Check, catalog, declare, select

TAIL = 8_000  # bytes of worker stderr kept for a crash/timeout message
FAILING = ("fail", "crash", "timeout")


def emit(stream: Any, obj: Dict[str, Any]) -> None:
    stream.write(MARKER + json.dumps(obj, sort_keys=True, default=str) + "\n")
    stream.flush()


def describe(chk: Check) -> Dict[str, Any]:
    return {"check": chk.id, "feature": chk.feature, "kind": chk.kind, "library": chk.library,
            "version": chk.version, "unit": chk.unit, "bigger_is_better": chk.bigger_is_better}


# ---------------------------------------------------------------- worker ---

def scalar_metrics(metrics: Dict[str, Any]) -> Dict[str, Any]:
    """Metrics are scalars (numbers, strings, booleans); anything else a check
    reports (a list of devices, a dict) is kept as compact JSON text."""
    out = {}
    for key, value in metrics.items():
        if value is None or isinstance(value, (bool, int, float, str)):
            out[str(key)] = value
        else:
            out[str(key)] = json.dumps(value, default=str, sort_keys=True)[:2000]
    return out


def run_check(chk: Check, ctx: Context, attempt: int) -> Dict[str, Any]:
    """Run one check body; every outcome becomes a result dict."""
    result = describe(chk)
    result["attempt"] = attempt
    host_before = hoststate.state()
    t0 = time.perf_counter()
    try:
        report = chk.fn(ctx)
        if report is None:
            report = Report()
        result.update(status="pass", message=report.message, metrics=report.metrics,
                      samples=[float(s) for s in report.samples])
        if report.samples:  # a timed check: how loaded the host was around it
            result["metrics"] = dict(report.metrics, **hoststate.around(host_before))
        if report.unit:
            result["unit"] = report.unit
        if getattr(report, "log", ""):
            result["log"] = report.log
        result["extra"] = list(getattr(report, "extra", None) or [])
    except Outcome as out:
        result.update(status=out.status, message=out.message, metrics=out.metrics)
        if getattr(out, "log", ""):
            result["log"] = out.log
        result["extra"] = list(getattr(out, "extra", None) or [])
    except Exception as exc:  # the image's framework raised: the check failed
        result.update(status="fail", message="%s: %s" % (type(exc).__name__, str(exc)[:1000]),
                      log=traceback.format_exc()[-4000:])
    result["duration_s"] = time.perf_counter() - t0
    result["metrics"] = scalar_metrics(result.get("metrics") or {})
    return result


def worker(config: Dict[str, Any]) -> int:
    # The protocol goes to a private copy of the original stdout; anything the
    # framework or a check prints on fd 1 lands on stderr instead.
    proto = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    sys.stdout = sys.stderr

    if config.get("declare") is not None:
        declare(config["suite"], config["declare"])
    s, _ = select(config["suite"])
    ctx = Context(config.get("expect"), config.get("device", "auto"))
    t0 = time.perf_counter()
    info = {"framework": s.framework, "framework_version": None, "import_error": None}
    if s.framework:
        try:
            mod = ctx.load(s.framework)
            info["framework_version"] = str(getattr(mod, "__version__", ""))
        except Outcome as out:
            info["import_error"] = out.message
    info["import_s"] = time.perf_counter() - t0
    proto.write("READY " + json.dumps(info) + "\n")
    proto.flush()

    attempts = int(config.get("attempts", 1))
    for cid in config["ids"]:
        chk = CHECKS[cid]
        attempt = int(config.get("first_attempt", {}).get(cid, 1))
        while True:
            proto.write("BEGIN %s %d\n" % (cid, attempt))
            proto.flush()
            res = run_check(chk, ctx, attempt)
            extra = res.pop("extra", None) or []
            proto.write("RESULT " + json.dumps(res, default=str) + "\n")
            for more in extra:  # after the check's own result: the parent is done with it
                if more.get("check") not in config["ids"]:
                    more = dict({"kind": chk.kind, "feature": chk.feature, "version": 1}, **more)
                    more["attempt"] = attempt
                    proto.write("RESULT " + json.dumps(more, default=str) + "\n")
            proto.flush()
            if res["status"] not in FAILING or attempt >= attempts:
                break
            attempt += 1
    proto.flush()
    sys.stderr.flush()
    # Everything is reported: skip the interpreter's teardown, which for a
    # framework like torch costs as much as a second of wall time per suite.
    os._exit(0)


# ---------------------------------------------------------------- parent ---

class Supervisor(object):
    def __init__(self, args: argparse.Namespace, checks: List[Check], out: Any):
        self.args = args
        self.remaining = [c.id for c in checks]
        self.first_attempt = {}  # type: Dict[str, int]
        self.out = out
        self.workers = 0
        self.import_s = 0.0

    def _record(self, cid: str, attempt: int, status: str, message: str, log: str,
                duration: float) -> None:
        res = describe(CHECKS[cid])
        res.update(attempt=attempt, status=status, message=message, log=log, duration_s=duration)
        emit(self.out, dict(res, type="result"))

    def run(self) -> None:
        while self.remaining:
            self._one_worker()

    def _one_worker(self) -> None:
        a = self.args
        config = {"suite": a.suite, "ids": self.remaining, "expect": a.expect_obj, "declare": a.declare_obj,
                  "device": a.device, "attempts": a.attempts, "first_attempt": self.first_attempt}
        pkg = __package__ or "valorch_probe"
        proc = subprocess.Popen([sys.executable, "-m", pkg, "worker"], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                start_new_session=True)
        self.workers += 1
        proc.stdin.write(json.dumps(config).encode())
        proc.stdin.close()

        sel = selectors.DefaultSelector()
        sel.register(proc.stdout, selectors.EVENT_READ, "proto")
        sel.register(proc.stderr, selectors.EVENT_READ, "err")
        buf = b""
        tail = b""
        ready = False
        current = None  # (check id, attempt, started)
        deadline = time.monotonic() + a.import_timeout
        open_fds = 2
        timed_out = False
        while open_fds:
            left = deadline - time.monotonic()
            if left <= 0:
                timed_out = True
                break
            for key, _ in sel.select(timeout=min(left, 1.0)):
                chunk = os.read(key.fileobj.fileno(), 65536)
                if not chunk:
                    sel.unregister(key.fileobj)
                    open_fds -= 1
                    continue
                if key.data == "err":
                    tail = (tail + chunk)[-TAIL:]
                    continue
                buf += chunk
                while b"\n" in buf:
                    line, buf = buf.split(b"\n", 1)
                    text = line.decode("utf-8", "replace")
                    if text.startswith("READY "):
                        ready = True
                        info = json.loads(text[6:])
                        self.import_s += float(info.get("import_s", 0.0))
                        emit(self.out, dict(info, type="worker", n=self.workers))
                        deadline = time.monotonic() + a.deadline
                    elif text.startswith("BEGIN "):
                        _, cid, att = text.split(" ")
                        current = (cid, int(att), time.monotonic())
                        tail = b""
                        deadline = time.monotonic() + a.deadline
                    elif text.startswith("RESULT "):
                        res = json.loads(text[7:])
                        emit(self.out, dict(res, type="result"))
                        cid = res["check"]
                        if cid in self.remaining and (res["status"] not in FAILING
                                                      or res["attempt"] >= a.attempts):
                            self.remaining.remove(cid)
                        current = None
                        deadline = time.monotonic() + a.deadline
        if timed_out:
            _kill(proc)
        rc = proc.wait()
        sel.close()
        log = tail.decode("utf-8", "replace")
        if not ready:
            why = ("framework import passed its deadline of %ss" % a.import_timeout if timed_out
                   else "worker died before it was ready (%s)" % _exit_text(rc))
            for cid in list(self.remaining):
                self._record(cid, 1, "timeout" if timed_out else "crash", why, log, 0.0)
            self.remaining = []
            return
        if current is not None:
            cid, att, started = current
            duration = time.monotonic() - started
            if timed_out:
                self._record(cid, att, "timeout", "passed its deadline of %ss; worker killed" % a.deadline,
                             log, duration)
            else:
                self._record(cid, att, "crash", "worker died: %s" % _exit_text(rc), log, duration)
            if att < a.attempts:
                self.first_attempt[cid] = att + 1
            elif cid in self.remaining:
                self.remaining.remove(cid)
        elif self.remaining and not timed_out and rc == 0:
            # A worker that exits cleanly without reporting everything is a harness bug.
            for cid in self.remaining:
                self._record(cid, 1, "error", "worker exited without reporting this check", log, 0.0)
            self.remaining = []


def _kill(proc: "subprocess.Popen[bytes]") -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()


def _exit_text(rc: int) -> str:
    if rc < 0:
        try:
            return "killed by %s" % signal.Signals(-rc).name
        except ValueError:
            return "killed by signal %d" % -rc
    return "exit code %d" % rc


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="valorch_probe")
    sub = p.add_subparsers(dest="cmd")
    r = sub.add_parser("run")
    r.add_argument("--suite", required=True)
    r.add_argument("--check", action="append", default=[])
    r.add_argument("--expect", default="{}")
    r.add_argument("--deadline", type=float, default=120.0)
    r.add_argument("--import-timeout", type=float, default=300.0)
    r.add_argument("--device", choices=("auto", "cpu"), default="auto")
    r.add_argument("--attempts", type=int, default=1)
    r.add_argument("--declare", default=None, help="JSON: the checks a job declares (suites command, pytest)")
    sub.add_parser("list")
    sub.add_parser("worker")
    sub.add_parser("inventory", add_help=False)  # its own options: valorch_probe.inventory
    return p


def main(argv: List[str]) -> int:
    args, rest = _parser().parse_known_args(argv)
    if args.cmd == "inventory":
        from .inventory import main as inventory_main
        return inventory_main(rest)
    if rest:
        _parser().error("unrecognized arguments: %s" % " ".join(rest))
    if args.cmd == "worker":
        return worker(json.loads(sys.stdin.read()))
    if args.cmd == "list":
        sys.stdout.write(json.dumps(catalog(), indent=1) + "\n")
        return 0
    if args.cmd != "run":
        _parser().print_help()
        return 2
    out = sys.stdout
    t0 = time.perf_counter()
    try:
        args.expect_obj = json.loads(args.expect)
        args.declare_obj = json.loads(args.declare) if args.declare else None
        if args.declare_obj is not None:
            declare(args.suite, args.declare_obj)
        s, checks = select(args.suite, args.check)
    except (KeyError, ValueError, TypeError) as exc:
        emit(out, {"type": "fatal", "message": "bad probe arguments: %s" % exc})
        return 2
    emit(out, {"type": "meta", "probe_version": PROBE_VERSION, "python": platform.python_version(),
               "implementation": platform.python_implementation(), "machine": platform.machine(),
               "suite": s.name, "framework": s.framework, "checks": [c.id for c in checks]})
    sup = Supervisor(args, checks, out)
    sup.run()
    emit(out, {"type": "end", "workers": sup.workers, "import_s": sup.import_s,
               "wall_s": time.perf_counter() - t0})
    return 0
