"""The one module that runs local commands (argv lists, never shell strings)."""

from __future__ import annotations

import contextlib
import os
import selectors
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Completed:
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
        return Completed(None, "", "", error=f"{argv[0]}: not found")
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        return Completed(None, out, "", error=f"{argv[0]}: timed out after {timeout}s")
    except OSError as exc:
        return Completed(None, "", "", error=f"{argv[0]}: {exc.strerror}")
    return Completed(done.returncode, done.stdout, done.stderr)


@dataclass(frozen=True)
class Streamed:
    returncode: int | None
    stderr_tail: str
    timed_out: bool
    error: str | None = None


def stream(
    argv: list[str],
    on_stdout: Callable[[bytes], None],
    timeout: float,
    env: dict[str, str] | None = None,
    cwd: str | None = None,
    spawned: Callable[[int], None] | None = None,
) -> Streamed:
    """Run ``argv`` in its own process group, hand stdout chunks to ``on_stdout``, keep the tail of
    stderr, and kill the whole tree (``kill_tree``) at the deadline (also on Ctrl-C in this thread);
    ``spawned`` gets the child's pid, for a ``kill_tree`` from another thread."""
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
    if spawned is not None:  # whoever may cancel it (kill_tree) learns its pid
        spawned(child.pid)
    stdout, stderr = child.stdout, child.stderr
    assert stdout is not None and stderr is not None  # both are PIPE above
    sel = selectors.DefaultSelector()
    sel.register(stdout, selectors.EVENT_READ, "out")
    sel.register(stderr, selectors.EVENT_READ, "err")
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
                chunk = os.read(key.fd, 65536)
                if not chunk:
                    sel.unregister(key.fileobj)
                    open_fds -= 1
                elif key.data == "out":
                    on_stdout(chunk)
                else:
                    err = (err + chunk)[-8_000:]
    finally:
        if timed_out or (child.poll() is None and open_fds):
            kill_tree(child.pid)
            try:
                os.killpg(child.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                child.kill()
        sel.close()
        rc = child.wait()
        stdout.close()
        stderr.close()
    return Streamed(rc, err.decode("utf-8", "replace"), timed_out)


def descendants(pid: int) -> list[int]:
    """Every living descendant of ``pid`` (from /proc; empty where there is none)."""
    parent: dict[int, int] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as fh:
                stat = fh.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2 :].split()  # after "pid (comm) "
        if len(fields) > 1:
            parent[int(entry)] = int(fields[1])
    found: list[int] = []
    frontier = [pid]
    while frontier:
        current = frontier.pop()
        kids = [p for p, pp in parent.items() if pp == current and p not in found]
        found.extend(kids)
        frontier.extend(kids)
    return found


def kill_tree(pid: int) -> None:
    """SIGKILL ``pid``'s process group and every group and process below it: a task's
    workloads run in sessions of their own (the probe's sandbox), which a signal to the
    probe's group alone leaves running, reparented to init, after valorch exits. The
    group is stopped first so that nothing forks between the look and the kill."""
    with contextlib.suppress(OSError):
        os.killpg(pid, signal.SIGSTOP)
    below = descendants(pid)
    groups = set()
    for p in below:
        with contextlib.suppress(OSError):
            groups.add(os.getpgid(p))
    groups.discard(os.getpgrp())  # never valorch's own group
    for group in groups:
        with contextlib.suppress(OSError):
            os.killpg(group, signal.SIGKILL)
    for p in below:
        with contextlib.suppress(OSError):
            os.kill(p, signal.SIGKILL)
    with contextlib.suppress(OSError):
        os.killpg(pid, signal.SIGKILL)
