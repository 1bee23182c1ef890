"""The host's state around a timed check: load average and CPU frequency governor.

A timing taken while other work competes for the CPUs says more about the host
than about the image (issue 13). The load average is not namespaced, so inside a
container /proc/loadavg is the host's; the governor is read from sysfs where it
is exposed (absent on many VMs and containers: then "unknown").
Standard library only, Python >= 3.8 (this runs inside images).
"""

from __future__ import annotations

import os
from typing import Any, Dict, Optional

GOVERNOR = "/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"


def load() -> Optional[float]:
    try:
        return round(os.getloadavg()[0], 2)
    except (OSError, AttributeError):
        return None


def governor() -> str:
    try:
        with open(GOVERNOR) as fh:
            return fh.read().strip()[:40] or "unknown"
    except OSError:
        return "unknown"


def around(before: Optional[float]) -> Dict[str, Any]:
    """Metrics for a timed check: the 1-minute load before and after it, the CPUs
    the load is shared by, and the governor."""
    return {"host_load_before": before, "host_load_after": load(), "host_cpus": os.cpu_count() or 1,
            "cpu_governor": governor()}
