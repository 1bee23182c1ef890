"""Whether the kernel's OOM killer acted in this container (its cgroup), and at what
limit, so that a check killed for memory is ``crash`` "killed: out of memory" and not
an unexplained SIGKILL. Standard library only, Python >= 3.8; None where unknown."""

from __future__ import annotations

import contextlib
from typing import Optional

from . import read_text

# cgroup v2 (the container's own cgroup is mounted at /sys/fs/cgroup), then v1
EVENTS = ("/sys/fs/cgroup/memory.events", "/sys/fs/cgroup/memory/memory.oom_control")
LIMITS = ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes")


def oom_kills() -> Optional[int]:
    """How many processes the OOM killer has killed in this cgroup so far (None: unknown)."""
    for path in EVENTS:
        with contextlib.suppress(OSError, ValueError), open(path) as fh:
            for line in fh:
                key, _, value = line.partition(" ")
                if key == "oom_kill":
                    return int(value)
    return None


def limit_text() -> str:
    """The container's memory limit in words ("" when there is none or it is unknown)."""
    for path in LIMITS:
        raw = read_text(path).strip()  # "" where unreadable
        if raw.isdigit() and int(raw) < (1 << 60):
            return "the container's memory limit of %d MiB" % (int(raw) >> 20)
    return ""


def killed_for_memory(before: Optional[int], returncode: Optional[int]) -> Optional[str]:
    """The message for a process that died by SIGKILL (-9, or 137 from a shell) while the
    OOM kill count rose, else None."""
    after = oom_kills()
    if returncode not in (-9, 128 + 9) or before is None or after is None or after <= before:
        return None
    limit = limit_text()
    return "killed: out of memory" + (" (%s)" % limit if limit else "")
