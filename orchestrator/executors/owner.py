"""Who started a container: this valorch process, as a label (boot id, PID namespace,
pid, start time).

A valorch that is killed outright (SIGKILL, the OOM killer) cleans nothing up: its
containers stay. Those of runs it had stored go with the next run (finished runs) or
with ``--resume``; a batch's first containers, though, start a moment before its runs
are stored (services/batch), so a kill in that moment leaves containers that no stored
run names. A container whose owner was a process of this machine's current boot, in
this PID namespace, that no longer lives is an orphan, whichever store it belongs to,
and ``reap_known`` removes it. Anything else (another machine's valorch on a shared
engine, one in a container of its own, an owner still alive, one that cannot be
checked) is left alone.
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

BOOT_ID = Path("/proc/sys/kernel/random/boot_id")


@lru_cache(maxsize=1)
def boot_id() -> str | None:
    try:
        return BOOT_ID.read_text().strip() or None
    except OSError:
        return None


def start_time(pid: int) -> str | None:
    """A process's start time (clock ticks since boot, /proc/PID/stat field 22): with the
    pid, it names one process, not whichever later took its pid."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[1].split()
    return fields[19] if len(fields) > 19 else None


@lru_cache(maxsize=1)
def pid_namespace() -> str | None:
    """This process's PID namespace ("4026531836"): a pid means something only in its own."""
    try:
        return os.readlink("/proc/self/ns/pid").partition("[")[2].rstrip("]") or None
    except OSError:
        return None


@lru_cache(maxsize=1)
def me() -> str | None:
    """This process as an owner label, or None where it cannot be named (not Linux)."""
    boot, ns, start = boot_id(), pid_namespace(), start_time(os.getpid())
    return f"{boot}/{ns}/{os.getpid()}/{start}" if boot and ns and start else None


def orphaned(owner: str | None) -> bool:
    """Whether a container with this owner label was left by a valorch that no longer runs."""
    parts = (owner or "").split("/")
    # no label, another machine, boot or PID namespace: nothing to check it against
    if (
        len(parts) != 4
        or not parts[2].isdigit()
        or parts[0] != boot_id()
        or parts[1] != pid_namespace()
    ):
        return False
    pid = int(parts[2])
    try:
        os.kill(pid, 0)  # not /proc: with hidepid, another user's processes are not listed there
    except ProcessLookupError:
        return True
    except OSError:
        return False  # alive, another user's
    now = start_time(pid)
    return now is not None and now != parts[3]  # the pid was taken by a later process
