"""The probe's parent: supervises one worker process at a time (runner.py has
the worker and the command line).

It reads the worker's pipe, forwards its results to stdout behind ``MARKER``,
and records ``crash`` / ``timeout`` for the check a worker died in, then starts
a fresh worker for the checks that remain. Only lines that carry the worker's
nonce count: anything else on the pipe was written by someone else (a
workload that found the pipe through /proc) and becomes a ``violation``
record naming the check in flight, never a result.
"""

from __future__ import annotations

import argparse
import binascii
import contextlib
import json
import os
import selectors
import signal
import sys
import time
import traceback
from typing import Any, Callable, Dict, List, Optional, Tuple

from . import memory, sandbox
from .registry import CHECKS, Check
from .runner import FAILING, begin_mark, describe, emit, worker

TAIL = 8_000  # bytes of worker stderr kept for a crash/timeout message
MAX_PIPE_LINE = 4 << 20  # bytes of one line on the worker's pipe
ACK_FD = 3  # the worker's end of the supervisor's acknowledgements
MAX_VIOLATIONS = 20  # violation records reported per worker; the rest are counted


class Supervisor:
    def __init__(self, args: argparse.Namespace, checks: List[Check], out: Any):
        self.args = args
        self.remaining = [c.id for c in checks]
        self.first_attempt = {}  # type: Dict[str, int]
        self.out = out
        self.workers = 0
        self.import_s = 0.0

    def _record(
        self, cid: str, attempt: int, status: str, message: str, log: str, duration: float
    ) -> None:
        res = describe(CHECKS[cid])
        res.update(attempt=attempt, status=status, message=message, log=log, duration_s=duration)
        emit(self.out, dict(res, type="result"))

    def _record_rest(self, status: str, message: str, log: str) -> None:
        for cid in self.remaining:
            self._record(cid, self.first_attempt.get(cid, 1), status, message, log, 0.0)
        self.remaining = []

    def run(self) -> None:
        while self.remaining:
            self._one_worker()

    def _one_worker(self) -> None:
        a = self.args
        nonce = binascii.hexlify(os.urandom(16)).decode()
        config = {
            "suite": a.suite,
            "ids": self.remaining,
            "expect": a.expect_obj,
            "device": a.device,
            "attempts": a.attempts,
            "first_attempt": self.first_attempt,
            "nonce": nonce,
        }
        self.oom_before = memory.oom_kills()
        proc = Forked(config)
        self.workers += 1
        w = _WorkerState(self, nonce, time.monotonic() + a.import_timeout, proc.ack)

        sel = selectors.DefaultSelector()
        sel.register(proc.stdout, selectors.EVENT_READ, "proto")
        sel.register(proc.stderr, selectors.EVENT_READ, "err")
        buf = b""
        open_fds = 2
        timed_out = False
        next_reap = 0.0
        while open_fds:
            now = time.monotonic()
            left = w.deadline - now
            if left <= 0:
                timed_out = True
                break
            if now >= next_reap:  # as PID 1: what workloads left behind, once a second at most
                sandbox.reap_orphans(keep=proc.pid)
                next_reap = now + 1.0
            for key, _ in sel.select(timeout=min(left, 1.0)):
                chunk = os.read(key.fd, 65536)
                if not chunk:
                    sel.unregister(key.fileobj)
                    open_fds -= 1
                    continue
                if key.data == "err":
                    w.stderr(chunk)
                    continue
                lines = (buf + chunk).split(b"\n")
                buf = lines.pop()
                for line in lines:
                    w.line(line)
                if len(buf) > MAX_PIPE_LINE:
                    w.violation("a line of more than %d bytes on the worker's pipe" % MAX_PIPE_LINE)
                    buf, w.skipping = b"", True
        if timed_out:
            proc.kill()
        rc = proc.wait()
        sel.close()
        proc.close()
        w.summarise()
        self._after(w, timed_out, rc)

    def _after(self, w: _WorkerState, timed_out: bool, rc: int) -> None:
        """Results for what the worker did not report: the check it died in, or all."""
        a = self.args
        log = w.tail.decode("utf-8", "replace")
        if not w.ready:
            why = (
                "framework import passed its deadline of %ss" % a.import_timeout
                if timed_out
                else "worker died before it was ready (%s)" % _exit_text(rc)
            )
            self._record_rest("timeout" if timed_out else "crash", why, log)
            return
        current = w.current
        if current is None and self.remaining and not w.progress:
            # Ready, then dead or stuck before its first check began: charge that
            # check, so that a worker killed again and again cannot loop forever.
            cid = self.remaining[0]
            current = (cid, self.first_attempt.get(cid, 1), time.monotonic())
        if current is not None:
            cid, att, started = current
            duration = time.monotonic() - started
            if timed_out:
                status, why = "timeout", "passed its deadline of %ss; worker killed" % a.deadline
            else:
                died = "worker died: %s" % _exit_text(rc)
                status, why = "crash", memory.killed_for_memory(self.oom_before, rc) or died
            self._record(cid, att, status, why, log, duration)
            if att < a.attempts:
                self.first_attempt[cid] = att + 1
            elif cid in self.remaining:
                self.remaining.remove(cid)
        elif self.remaining and not timed_out and rc == 0:
            # A worker that exits cleanly without reporting everything is a harness bug.
            self._record_rest("error", "worker exited without reporting this check", log)


class _WorkerState:
    """What the parent knows of one worker while reading its pipe."""

    def __init__(self, sup: Supervisor, nonce: str, deadline: float, ack: Callable[[], None]):
        self.sup = sup
        self.ack = ack  # tells the worker its results are forwarded (runner.synced)
        self.prefix = (nonce + " ").encode()
        self.deadline = deadline
        self.tail = b""  # the worker's stderr since the last check began
        self.mark = begin_mark(nonce)
        self.ready = False
        self.progress = False
        self.current: Optional[Tuple[str, int, float]] = None  # (check id, attempt, started)
        self.skipping = False  # the rest of an over-long line is discarded
        self.violations = 0
        # (check, attempt) of the last violation
        self.last: Tuple[Optional[str], Optional[int]] = (None, None)

    def stderr(self, chunk: bytes) -> None:
        """A chunk of the worker's stderr: the tail kept is what came after the
        last check's begin mark (a mark split across chunks is found whole in
        the tail, which is far longer than the mark)."""
        data = self.tail + chunk
        cut = data.rfind(self.mark)
        if cut >= 0:
            data = data[cut + len(self.mark) :]
        self.tail = data[-TAIL:]

    def line(self, raw: bytes) -> None:
        if self.skipping:
            self.skipping = False
            return
        if not raw.startswith(self.prefix):
            self.violation("a line on the worker's pipe without the worker's nonce: %r" % raw[:120])
            return
        text = raw[len(self.prefix) :].decode("utf-8", "replace")
        try:
            self._record(text)
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            self.violation(
                "a line on the worker's pipe that does not parse (%s): %r" % (exc, raw[:120])
            )

    def _record(self, text: str) -> None:
        sup, a = self.sup, self.sup.args
        if text.startswith("READY "):
            info = json.loads(text[6:])
            self.ready = True
            sup.import_s += float(info.get("import_s", 0.0))
            emit(sup.out, dict(info, type="worker", n=sup.workers))
            self.deadline = time.monotonic() + a.deadline
        elif text.startswith("BEGIN "):
            _, cid, att = text.split(" ")
            self.current = (cid, int(att), time.monotonic())
            self.deadline = time.monotonic() + a.deadline
        elif text.startswith("RESULT "):
            res = json.loads(text[7:])
            cid = res["check"]
            emit(sup.out, dict(res, type="result"))
            self.progress = True
            if cid in sup.remaining and (
                res["status"] not in FAILING or res["attempt"] >= a.attempts
            ):
                sup.remaining.remove(cid)
            self.current = None
            self.deadline = time.monotonic() + a.deadline
        elif text == "SYNC":  # every result before it is on stdout (emit flushes)
            self.ack()
        else:
            raise ValueError("unknown line")

    def violation(self, message: str) -> None:
        self.violations += 1
        if self.violations > MAX_VIOLATIONS:
            return
        self.last = (self.current or (None, None, None))[:2]
        self._emit(message)

    def _emit(self, message: str) -> None:
        cid, att = self.last
        emit(self.sup.out, {"type": "violation", "check": cid, "attempt": att, "message": message})

    def summarise(self) -> None:
        if self.violations > MAX_VIOLATIONS:
            more = self.violations - MAX_VIOLATIONS
            self._emit("%d more violations on the worker's pipe" % more)


class Forked:
    """A worker forked from the supervisor, in a session of its own, its stdout and
    stderr on two pipes and its stdin on /dev/null; a third pipe, on descriptor ACK_FD
    of the worker alone (never inherited by what a check runs), carries the
    supervisor's acknowledgements (runner.synced). A fork, not a fresh interpreter:
    the probe's modules (and a declared suite's checks) are already here, which takes
    an interpreter's start and the probe's imports off every worker's way to its
    framework import. The supervisor never imports a framework, so the child starts
    clean of one. Only descriptors 0-2 stay open in the child, as with close_fds."""

    def __init__(self, config: Dict[str, Any]):
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        ack_r, ack_w = os.pipe()
        for stream in (sys.stdout, sys.stderr):
            stream.flush()  # or the child would write the supervisor's buffered output again
        pid = os.fork()
        if pid == 0:  # the worker: it never returns into the supervisor
            code = 1
            try:
                os.setsid()
                null = os.open(os.devnull, os.O_RDONLY)
                os.dup2(null, 0)
                os.dup2(out_w, 1)
                os.dup2(err_w, 2)
                os.dup2(ack_r, ACK_FD, inheritable=False)
                _close_above_stderr(keep=ACK_FD)
                code = worker(dict(config, ack_fd=ACK_FD))
            except BaseException:
                with contextlib.suppress(BaseException):
                    traceback.print_exc()
                    sys.stderr.flush()
            finally:
                os._exit(code)
        os.close(out_w)
        os.close(err_w)
        os.close(ack_r)
        self.pid, self.stdout, self.stderr, self.ack_w = pid, out_r, err_r, ack_w
        self.returncode: Optional[int] = None  # set by wait

    def wait(self) -> int:
        if self.returncode is None:
            _, status = os.waitpid(self.pid, 0)
            self.returncode = (
                -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
            )
        return self.returncode

    def ack(self) -> None:
        """One acknowledgement; a worker that already ended is no error of the probe's."""
        with contextlib.suppress(OSError):
            os.write(self.ack_w, b"\n")

    def close(self) -> None:
        for fd in (self.stdout, self.stderr, self.ack_w):
            with contextlib.suppress(OSError):
                os.close(fd)

    def kill(self) -> None:
        """The worker's whole session (its pid names the group), else the worker alone."""
        try:
            os.killpg(self.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            with contextlib.suppress(OSError):
                os.kill(self.pid, signal.SIGKILL)


def _close_above_stderr(keep: int) -> None:
    """Close every descriptor but 0-2 and ``keep`` (listed from /proc: a container's open-files limit
    can be a million, too many to close one by one)."""
    try:
        fds = [int(fd) for fd in os.listdir("/proc/self/fd")]
    except OSError:
        os.closerange(keep + 1, 65536)
        os.closerange(3, keep)
        return
    for fd in fds:
        if fd > 2 and fd != keep:
            with contextlib.suppress(OSError):
                os.close(fd)


def _exit_text(rc: int) -> str:
    if rc < 0:
        try:
            return "killed by %s" % signal.Signals(-rc).name
        except ValueError:
            return "killed by signal %d" % -rc
    return "exit code %d" % rc
