"""The median, quartiles and robust CV of one result's timing samples, as the site shows
them. The standard library only: the build's own process and its summaries process
(ext/site/summaries.py) compute them with this one function."""

from __future__ import annotations

from collections.abc import Sequence

#: n → where the median and the quartiles of n sorted values are: (index, fraction) per
#: quantile, fraction None where the index is the last (the value itself)
_SPOTS: dict[int, tuple[tuple[int, float | None], ...]] = {}


def _spots(n: int) -> tuple[tuple[int, float | None], ...]:
    hit = _SPOTS.get(n)
    if hit is None:
        out = []
        for f in (0.5, 0.25, 0.75):
            x = f * (n - 1)
            i = int(x)
            out.append((i, None if i + 1 >= n else x - i))
        hit = _SPOTS[n] = tuple(out)
    return hit


def summary(samples: Sequence[float]) -> tuple[float, float, float, float | None]:
    """Median, quartiles and robust CV (noise.cv) from one sort: 300,000 of them per site. Linear
    interpolation between the sorted values, its positions computed once per sample count."""
    s = sorted(samples)
    (mi, mf), (ai, af), (bi, bf) = _spots(len(s))
    med = s[mi] if mf is None else s[mi] + (s[mi + 1] - s[mi]) * mf
    q1 = s[ai] if af is None else s[ai] + (s[ai + 1] - s[ai]) * af
    q3 = s[bi] if bf is None else s[bi] + (s[bi + 1] - s[bi]) * bf
    if med > 0:
        dev = sorted([abs(x - med) for x in s])
        d = dev[mi] if mf is None else dev[mi] + (dev[mi + 1] - dev[mi]) * mf
        cv: float | None = 1.4826 * d / med
    else:
        cv = None
    return med, q1, q3, cv
