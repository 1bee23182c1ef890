"""The one module that runs local commands (argv lists, never shell strings)."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Completed:
    argv: tuple[str, ...]
    returncode: int | None
    stdout: str
    stderr: str
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None and self.returncode == 0


def call(
    argv: list[str],
    timeout: float = 60,
    input: str | None = None,
    env: dict[str, str] | None = None,
    cwd: str | None = None,
) -> Completed:
    """Run ``argv``; a missing program or a timeout is data, not an exception."""
    try:
        done = subprocess.run(
            argv,
            capture_output=True,
            text=True,
            timeout=timeout,
            input=input,
            env=env,
            cwd=cwd,
            check=False,
        )
    except FileNotFoundError:
        return Completed(tuple(argv), None, "", "", error=f"{argv[0]}: not found")
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        return Completed(tuple(argv), None, out, "", error=f"{argv[0]}: timed out after {timeout}s")
    except OSError as exc:
        return Completed(tuple(argv), None, "", "", error=f"{argv[0]}: {exc.strerror}")
    return Completed(tuple(argv), done.returncode, done.stdout, done.stderr)


@dataclass(frozen=True)
class Streamed:
    returncode: int | None
    stderr_tail: str
    timed_out: bool
    error: str | None = None


def stream(
    argv: list[str],
    on_stdout: Callable[[bytes], object],
    timeout: float,
    env: dict[str, str] | None = None,
    cwd: str | None = None,
    tail: int = 8_000,
) -> Streamed:
    """Run ``argv`` in its own process group, hand stdout chunks to ``on_stdout``,
    keep the tail of stderr, and kill the whole group at the deadline (also on Ctrl-C)."""
    import os
    import selectors
    import signal
    import time

    try:
        child = subprocess.Popen(
            argv,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            env=env,
            cwd=cwd,
            start_new_session=True,
        )
    except OSError as exc:
        return Streamed(None, "", False, error=f"{argv[0]}: {exc.strerror}")
    sel = selectors.DefaultSelector()
    sel.register(child.stdout, selectors.EVENT_READ, "out")
    sel.register(child.stderr, selectors.EVENT_READ, "err")
    err = b""
    deadline = time.monotonic() + timeout
    timed_out = False
    try:
        open_fds = 2
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
                elif key.data == "out":
                    on_stdout(chunk)
                else:
                    err = (err + chunk)[-tail:]
    finally:
        if timed_out or (child.poll() is None and open_fds):
            try:
                os.killpg(child.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                child.kill()
        sel.close()
        rc = child.wait()
        child.stdout.close()
        child.stderr.close()
    return Streamed(rc, err.decode("utf-8", "replace"), timed_out)
