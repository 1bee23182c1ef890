"""Steps and slow drift in a timed check's history (pure, stdlib only).

A history is the per-run median of one check in one environment (image, host), in
time order. It is cut into segments of constant level by binary segmentation (as
ruptures' Binseg; exact PELT cannot prune a history without change, O(n²), and cost the
site build seconds: docs/benchmarks.md, "Static site build") with a squared-error cost on
log medians (steps are relative), segments
of at least two runs (one odd run is not a new level: asv#881), and a penalty
``k · σ² · ln n`` where σ is the run-to-run noise estimated robustly from successive
differences, after a running median of three has taken out single-run spikes. ``k`` is calibrated on A/A histories (bench/bench_calibration.py).

Shifts are then read from the segment levels the way asv reads regressions after
its fix for gradual ones (airspeed-velocity/asv#932, #934): each level is compared
with the best (and worst) level since the last reported shift, not with its
neighbour, so a drift made of steps each below the threshold is found once their
sum passes it. As in the diff rule, a change counts when its 99 % interval reaches
the threshold (a step of exactly the threshold is then found, not half the time).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import accumulate, pairwise
from statistics import median

PENALTY_K = 4.0  # calibrated on A/A histories: see docs/site.md and bench/bench_calibration.py
MIN_SIZE = 2
SIGMA_FLOOR = 1e-3  # 0.1 %: a history of identical values is not cut on rounding


@dataclass(frozen=True)
class Segment:
    start: int  # first index
    end: int  # one past the last index
    level: float  # median of the values in it


@dataclass(frozen=True)
class Shift:
    kind: str  # step (one step) | drift (several steps, each under the threshold)
    direction: str  # slower | faster (worse | better for bigger-is-better checks)
    start: int  # index of the first run after the last good (or bad) level
    end: int  # index of the first run at the level where the change passed the threshold
    before: float
    after: float
    ratio: float  # > 1: worse
    steps: int


@dataclass(frozen=True)
class Analysis:
    segments: tuple[Segment, ...]
    shifts: tuple[Shift, ...]
    sigma: float  # run-to-run noise of the log medians


def robust_sigma(logs: Sequence[float]) -> float:
    """Run-to-run noise: 1.4826·MAD of successive differences / √2 (a step moves one
    difference only, so it barely changes the estimate)."""
    if len(logs) < 3:
        return SIGMA_FLOOR
    d = [b - a for a, b in pairwise(logs)]
    md = median(d)
    return max(SIGMA_FLOOR, 1.4826 * median(abs(x - md) for x in d) / math.sqrt(2))


def binseg(y: Sequence[float], penalty: float, min_size: int = MIN_SIZE) -> list[int]:
    """Change points by binary segmentation: the split of a segment that lowers its squared
    error most is kept while it lowers it by more than ``penalty``, then each half is split
    the same way. O(n log n) with prefix sums (exact PELT is O(n²) on a history without
    change, where it cannot prune: 3,000 histories of 100 runs took seconds)."""
    n = len(y)
    s1, s2 = [0.0, *accumulate(y)], [0.0, *accumulate(v * v for v in y)]

    out: list[int] = []
    stack = [(0, n)]
    while stack:
        a, b = stack.pop()
        if b - a < 2 * min_size:
            continue
        # the cost of a segment [a, b): s2[b] - s2[a] - s * s / (b - a), s = s1[b] - s1[a],
        # written out in the loop below (3,000 histories make 600,000 of them per site)
        s1a, s2a, s1b, s2b = s1[a], s2[a], s1[b], s2[b]
        s = s1b - s1a
        whole = s2b - s2a - s * s / (b - a)
        gain, at = max(
            [
                (
                    whole
                    - (s2[t] - s2a - (left := s1[t] - s1a) * left / (t - a))
                    - (s2b - s2[t] - (right := s1b - s1[t]) * right / (b - t)),
                    t,
                )
                for t in range(a + min_size, b - min_size + 1)
            ]
        )
        if gain > penalty:
            out.append(at)
            stack += [(a, at), (at, b)]
    return sorted(out)


def despike(values: Sequence[float]) -> list[float]:
    """A running median of three: one odd run (a preempted timing) cannot move a level or
    cut a segment, while a step (two or more runs at the new level) passes unchanged."""
    if len(values) < 3:
        return list(values)
    return (
        [values[0]]
        + [sorted(values[i - 1 : i + 2])[1] for i in range(1, len(values) - 1)]
        + [values[-1]]
    )


def segments(values: Sequence[float], k: float = PENALTY_K) -> tuple[tuple[Segment, ...], float]:
    raw = [math.log(v) for v in values]
    # the noise of the runs as they are; the cut is made on the despiked ones
    sigma = robust_sigma(raw)
    logs = despike(raw)
    cps = binseg(logs, k * sigma * sigma * math.log(max(len(logs), 2)))
    bounds = [0, *cps, len(values)]
    return tuple(
        Segment(a, b, math.exp(median(logs[a:b]))) for a, b in pairwise(bounds) if b > a
    ), sigma


def analyse(
    values: Sequence[float], threshold: float, bigger_is_better: bool = False, k: float = PENALTY_K
) -> Analysis:
    """Segments of a history of positive medians, and the shifts past ``threshold``."""
    vals = [v for v in values if v > 0]
    if len(vals) != len(values) or not vals:
        return Analysis((), (), SIGMA_FLOOR)
    segs, sigma = segments(vals, k)
    cost = [1 / s.level if bigger_is_better else s.level for s in segs]  # smaller is better
    z = 2.576  # as the diff rule: a change counts when its 99 % interval reaches the threshold

    def reaches(ratio: float, a: Segment, b: Segment) -> bool:
        se = 1.2533 * sigma * math.sqrt(1 / (a.end - a.start) + 1 / (b.end - b.start))
        return ratio * math.exp(z * se) > 1 + threshold

    shifts: list[Shift] = []
    best = worst = 0  # segment indexes since the last shift
    for j in range(1, len(segs)):
        if cost[j] > cost[best] and reaches(cost[j] / cost[best], segs[best], segs[j]):
            ref, direction = best, "slower"
        elif cost[j] < cost[worst] and reaches(cost[worst] / cost[j], segs[worst], segs[j]):
            ref, direction = worst, "faster"
        else:
            best = j if cost[j] < cost[best] else best
            worst = j if cost[j] > cost[worst] else worst
            continue
        steps = j - ref
        kind, ratio = ("step" if steps == 1 else "drift"), cost[j] / cost[ref]
        start, end = segs[ref + 1].start, segs[j].start
        shifts.append(
            Shift(kind, direction, start, end, segs[ref].level, segs[j].level, ratio, steps)
        )
        best = worst = j
    return Analysis(segs, tuple(shifts), sigma)
