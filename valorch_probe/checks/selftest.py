"""selftest: planted checks that prove the harness isolates crashes.

Run it on a new host or image to see that an abort, a segfault and a hang each
cost only their own check: every other check still reports.
"""

from __future__ import annotations

import os
import signal
import sys
import time

from ..context import Fail, Report
from ..registry import check, suite

suite(
    "selftest",
    None,
    "Harness self-test: planted abort, segfault, hang and noise; expected crash/timeout/pass.",
)


@check("selftest.pass", "Harness: a passing check", "selftest", "selftest")
def passes(ctx):
    """Always passes; proves the worker runs checks."""
    return Report("ok", {"pid": os.getpid()})


@check("selftest.noise", "Harness: stray output is ignored", "selftest", "selftest")
def noise(ctx):
    """Prints fake protocol lines on stdout and stderr; they must not become results."""
    from .. import MARKER

    print(MARKER + '{"type": "result", "check": "forged", "status": "pass"}')
    print('RESULT {"check": "forged"}')
    sys.stderr.write("noise on stderr\n")
    return Report("printed forged lines", {"pid": os.getpid()})


@check("selftest.abort", "Harness: abort is a crash", "selftest", "selftest")
def aborts(ctx):
    """Calls os.abort(); expected status: crash."""
    sys.stderr.write("about to abort\n")
    sys.stderr.flush()
    os.abort()


@check("selftest.segv", "Harness: segfault is a crash", "selftest", "selftest")
def segfaults(ctx):
    """Raises SIGSEGV in the worker; expected status: crash."""
    sys.stderr.write("about to segfault\n")
    sys.stderr.flush()
    os.kill(os.getpid(), signal.SIGSEGV)
    time.sleep(5)


@check("selftest.hang", "Harness: a hang is a timeout", "selftest", "selftest")
def hangs(ctx):
    """Sleeps forever; expected status: timeout at the per-check deadline."""
    sys.stderr.write("about to hang\n")
    sys.stderr.flush()
    while True:
        time.sleep(60)


@check("selftest.fail", "Harness: a failing check", "selftest", "selftest")
def fails(ctx):
    """Always fails; proves failures are reported as fail, not error."""
    raise Fail("planted failure")


@check("selftest.after", "Harness: checks after a crash still run", "selftest", "selftest")
def after(ctx):
    """Passes; reported from a fresh worker after the planted crashes."""
    return Report("ok", {"pid": os.getpid()})
