"""Ctrl-C, SIGTERM and SIGHUP at the edge of a command that runs containers.

Python dies at once on SIGTERM and SIGHUP (a closed terminal, an ended SSH session), which
skips every ``finally`` and leaves the containers and host probes in flight running. Inside
``interruptible()`` the three raise in the main thread (``KeyboardInterrupt``,
``Terminated``): the dispatcher cancels the tasks in flight (their containers removed as at
a normal end), marks the runs ``interrupted``, and the command exits 128 + the signal's
number. Further signals are ignored while that bounded clean-up runs (SIGKILL still kills).
"""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import typer

SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class Terminated(BaseException):
    """SIGTERM or SIGHUP arrived (a BaseException, as KeyboardInterrupt: no
    ``except Exception`` swallows it); ``signum`` says which."""

    def __init__(self, signum: int = signal.SIGTERM) -> None:
        super().__init__(signum)
        self.signum = signum


def _handler(signum: int, _frame: Any) -> None:
    for sig in SIGNALS:  # the first signal wins; clean up undisturbed
        signal.signal(sig, signal.SIG_IGN)
    if signum != signal.SIGINT:
        raise Terminated(signum)
    raise KeyboardInterrupt()


@contextmanager
def interruptible() -> Iterator[None]:
    """SIGINT, SIGTERM and SIGHUP become exceptions in the main thread, and exit 130 / 143 / 129."""
    previous = {sig: signal.signal(sig, _handler) for sig in SIGNALS}
    try:
        yield
    except (KeyboardInterrupt, Terminated) as exc:
        from .common import err

        # what a person needs after Ctrl-C: the batch the stop left (services.batch.naming_batch)
        # and the command that finishes it
        batch = getattr(exc, "resume_batch", None)
        said = (
            f"interrupted; resume with `valorch run --resume {batch}`"
            if batch
            else "interrupted (no batch had started: nothing to resume)"
        )
        err.print(said, markup=False)
        raise typer.Exit(128 + getattr(exc, "signum", signal.SIGINT)) from None
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
