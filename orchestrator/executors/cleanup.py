"""Clean-up that need not hold up the caller: an ended container's removal runs in a thread
of its own while the batch stores and reports its results (``later``), and the command
waits for it before it ends (``settle``). The threads are not daemons, so the interpreter
also waits for them at exit: nothing handed here is left undone by a normal end, an
exception or Ctrl-C in the main thread. No engine here: the work is the caller's function.
Its removal (0.07–0.13 s) used to follow the container on a run's path (docs/benchmarks.md,
"The smoke run against its floor: the run's own timeline")."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

_PENDING: list[threading.Thread] = []
_LOCK = threading.Lock()


def later(work: Callable[..., Any], *args: Any) -> None:
    """Run ``work(*args)`` in a thread of its own (it must not raise: its errors are its own)."""
    thread = threading.Thread(target=work, args=args, name="valorch-cleanup", daemon=False)
    with _LOCK:
        _PENDING[:] = [t for t in _PENDING if t.is_alive()]
        _PENDING.append(thread)
    thread.start()


def settle(timeout: float = 60.0) -> None:
    """Until every clean-up handed to ``later`` has run (at most ``timeout`` seconds in all;
    the interpreter still waits at exit for any that has not)."""
    with _LOCK:
        waiting, _PENDING[:] = list(_PENDING), []
    end = time.monotonic() + timeout
    for thread in waiting:
        thread.join(max(0.0, end - time.monotonic()))
