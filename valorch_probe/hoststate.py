"""The host's state around a timed check: load average and CPU frequency governor.

A timing taken while other work competes for the CPUs says more about the host
than about the image. The load average is not namespaced, so inside a
container /proc/loadavg is the host's; the governor is read from sysfs where it
is exposed (absent on many VMs and containers: then "unknown").
"""

from __future__ import annotations

import contextlib
import os
import time
from typing import Any, Dict, Optional, Tuple

from . import read_text

GOVERNOR = "/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"
PRESSURE = "/proc/pressure/cpu"  # Linux PSI: time some runnable task waited for a CPU


def load() -> Optional[float]:
    with contextlib.suppress(OSError, AttributeError):
        return round(os.getloadavg()[0], 2)
    return None


def stall_us() -> Optional[int]:
    """Cumulative microseconds during which some runnable task waited for a CPU (PSI)."""
    with contextlib.suppress(OSError, ValueError, IndexError), open(PRESSURE) as fh:
        for line in fh:
            if line.startswith("some "):
                return int(line.rsplit("total=", 1)[1])
    return None


def state() -> Tuple[Optional[float], Optional[int], float]:
    """What to take before a check: load, PSI stall counter, monotonic time."""
    return load(), stall_us(), time.monotonic()


def around(before: Tuple[Optional[float], Optional[int], float]) -> Dict[str, Any]:
    """Metrics for a timed check: the 1-minute load before and after it, the CPUs
    the load is shared by, the share of the check's wall time during which some
    task waited for a CPU (PSI, where the kernel has it) and the governor."""
    load0, stall0, t0 = before
    stall1, t1 = stall_us(), time.monotonic()
    pressure = None
    if stall0 is not None and stall1 is not None and t1 > t0:
        pressure = round(min(1.0, max(0.0, (stall1 - stall0) / 1e6 / (t1 - t0))), 3)
    return {
        "host_load_before": load0,
        "host_load_after": load(),
        "host_cpus": os.cpu_count() or 1,
        "cpu_pressure": pressure,
        "cpu_governor": read_text(GOVERNOR).strip()[:40] or "unknown",
    }
