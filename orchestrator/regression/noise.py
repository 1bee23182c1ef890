"""Noise of timed checks (pure, stdlib only): how much a timing varies, what change it
can reveal, whether the host was busy while it was taken, and the false-discovery
control over the many checks of one report.

- ``cv``: robust coefficient of variation of a run's samples (1.4826·MAD / median), so
  that a few preempted repetitions do not make a quiet check look noisy.
- ``detectable``: the relative change a comparison of two runs finds nine
  times in ten: it must clear the threshold with the median's standard error
  (1.2533·σ/√n for a normal sample) and be significant at ``alpha``.
- ``noisy``: a timed result taken while the host was busy (CPU pressure, or more
  runnable tasks than CPUs), from the metrics the probe records around it
  (valorch_probe/hoststate.py).
- ``benjamini_hochberg``: q-values of a family of p-values (Benjamini & Hochberg 1995).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from statistics import NormalDist, median
from typing import Any

Z90 = NormalDist().inv_cdf(0.90)  # power 90 %
MEDIAN_SE = math.sqrt(math.pi / 2)  # standard error of a median / (σ/√n), normal samples
NOISY_PRESSURE = 0.20  # share of the check's wall time some task waited for a CPU
NOISY_LOAD = 1.0  # 1-minute load per CPU, where no pressure figure exists


def cv(samples: Sequence[float]) -> float | None:
    """Robust coefficient of variation (1.4826·MAD/median); None for fewer than 3 samples."""
    if len(samples) < 3:
        return None
    m = median(samples)
    if m <= 0:
        return None
    return 1.4826 * median(abs(x - m) for x in samples) / m


def median_se(samples: Sequence[float]) -> float | None:
    """Relative standard error of the median of ``samples``."""
    c = cv(samples)
    return None if c is None else MEDIAN_SE * c / math.sqrt(len(samples))


def z_two_sided(alpha: float) -> float:
    return NormalDist().inv_cdf(1 - alpha / 2)


def ratio_se(
    base: Sequence[float],
    head: Sequence[float],
    run_sigma: float | None = None,
    runs: tuple[int, int] = (1, 1),
) -> float | None:
    """Standard error of log(head / base): each side's median's own, plus the run-to-run
    noise where A/A runs measured it, which shrinks with the runs pooled on each side
    (``runs``: how many runs each side's samples come from)."""
    sb, sh = median_se(base), median_se(head)
    if sb is None or sh is None:
        return None
    se = math.hypot(sb, sh)
    return math.hypot(se, run_sigma * math.sqrt(1 / runs[0] + 1 / runs[1])) if run_sigma else se


def beyond_run_noise(
    ratio: float, se: float | None, run_sigma: float | None, alpha: float = 0.01
) -> bool:
    """Where the run-to-run noise is known, a change must also clear it (a U test on one
    run's samples cannot see it); where it is not known, nothing more is asked."""
    if not run_sigma or not se or ratio <= 0:
        return True
    return abs(math.log(ratio)) > z_two_sided(alpha) * se


def detectable(se: float, threshold: float, alpha: float = 0.01) -> float:
    """The smallest relative slowdown a comparison whose log ratio has standard error ``se``
    (ratio_se) reveals nine times in ten: significant ((z_α + z_0.9)·se) and with an interval
    that reaches the threshold (bench/bench_calibration.py from measured noise)."""
    z_alpha = z_two_sided(alpha)
    return max(
        math.exp((z_alpha + Z90) * se) - 1, (1 + threshold) * math.exp(-(z_alpha - Z90) * se) - 1
    )


def _num(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def host_load(metrics: Mapping[str, Any] | None) -> float | None:
    """The highest 1-minute load per CPU seen around a timed check."""
    m = metrics or {}
    said = (_num(m.get("host_load_before")), _num(m.get("host_load_after")))
    loads = [x for x in said if x is not None]
    if not loads:
        return None
    return max(loads) / max(1.0, _num(m.get("host_cpus")) or 1.0)


def noisy(metrics: Mapping[str, Any] | None) -> bool:
    """Was the host busy while this timing was taken? CPU pressure where the kernel
    reports it (it measures this check's window), else the load average."""
    m = metrics or {}
    pressure = _num(m.get("cpu_pressure"))
    if pressure is not None:
        return pressure > NOISY_PRESSURE
    load = host_load(m)
    return load is not None and load > NOISY_LOAD


def benjamini_hochberg(pvalues: Sequence[float]) -> list[float]:
    n = len(pvalues)
    order = sorted(range(n), key=lambda i: pvalues[i])
    q = [1.0] * n
    running = 1.0
    for rank in range(n, 0, -1):
        i = order[rank - 1]
        running = min(running, pvalues[i] * n / rank)
        q[i] = min(1.0, running)
    return q
