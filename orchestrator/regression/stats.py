"""Statistics for the timing rule of the regression diff (pure, stdlib only).

- ``mann_whitney_u``: two-sided Mann–Whitney U test with the normal approximation,
  tie correction and continuity correction (the textbook form, as in
  scipy.stats.mannwhitneyu(method="asymptotic", use_continuity=True)).
- ``bootstrap_median_ci``: a percentile bootstrap interval of the median, with a
  seeded RNG so that the same samples always give the same interval.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from statistics import median as median  # re-exported: rule.py reads stats.median


def ranks(values: Sequence[float]) -> tuple[list[float], list[int]]:
    """Average ranks (1-based) of ``values`` and the sizes of the groups of ties."""
    order = sorted(range(len(values)), key=values.__getitem__)
    out = [0.0] * len(values)
    ties: list[int] = []
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        avg = (i + j) / 2 + 1
        for k in range(i, j + 1):
            out[order[k]] = avg
        if j > i:
            ties.append(j - i + 1)
        i = j + 1
    return out, ties


def mann_whitney_u(a: Sequence[float], b: Sequence[float]) -> float:
    """The two-sided p-value."""
    n1, n2 = len(a), len(b)
    r, ties = ranks(list(a) + list(b))
    u1 = sum(r[:n1]) - n1 * (n1 + 1) / 2
    n = n1 + n2
    mu = n1 * n2 / 2
    tie_term = sum(t**3 - t for t in ties) / (n * (n - 1))
    var = n1 * n2 / 12 * ((n + 1) - tie_term)
    if var <= 0:  # every value equal: no evidence of a difference
        return 1.0
    z = max(abs(u1 - mu) - 0.5, 0.0) / math.sqrt(var)
    return min(1.0, math.erfc(z / math.sqrt(2)))


def bootstrap_median_ci(
    samples: Sequence[float], confidence: float = 0.99, resamples: int = 2000, seed: int = 0
) -> tuple[float, float]:
    """Percentile bootstrap interval of the median; reproducible for a given seed."""
    rng = random.Random(seed)
    data = list(samples)
    n = len(data)
    meds = sorted(median(rng.choices(data, k=n)) for _ in range(resamples))
    alpha = (1 - confidence) / 2
    lo = meds[max(0, math.floor(alpha * resamples))]
    hi = meds[min(resamples - 1, math.ceil((1 - alpha) * resamples) - 1)]
    return lo, hi


def geomean(values: Sequence[float]) -> float:
    vals = [v for v in values if v > 0]
    if not vals:
        return float("nan")
    return math.exp(sum(math.log(v) for v in vals) / len(vals))
