"""Trend plots of timed checks as SVG, made when the site is built (ext/site/svg.py draws
them): the median of each run, the spread of its samples (first and third quartiles,
dashed), the threshold band around each fitted level, and the detected shifts as
vertical rules. docs/site.md says why our own SVG rather than pygal, vl-convert or
matplotlib.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime

from orchestrator.ext.site import svg

PALETTE = (
    "#1f5fbf",
    "#c2410c",
    "#15803d",
    "#7e22ce",
    "#0e7490",
    "#a16207",
    "#be185d",
    "#4d7c0f",
    "#475569",
    "#b91c1c",
)
SHIFT_COLOUR = {"slower": "#d11f1f", "faster": "#15803d"}
# more environments than this on one plot: medians only, spread on the run pages
MAX_SPREAD_SERIES = 3
MAX_POINTS = 600  # per plot: a long history in many environments is drawn as bucket medians


#: (when, median, q1, q3) in seconds
Point = tuple[datetime, float, float, float]


def _thin(points: tuple[Point, ...], most: int) -> tuple[Point, ...]:
    """At most ``most`` points: consecutive runs in equal buckets, each drawn at its middle
    run with the median of the bucket's medians (shifts keep their exact runs)."""
    if len(points) <= most:
        return points
    size = -(-len(points) // most)
    out = []
    for i in range(0, len(points), size):
        b = points[i : i + size]
        meds = sorted([p[1] for p in b])
        out.append(
            (
                b[len(b) // 2][0],
                meds[len(meds) // 2],
                min([p[2] for p in b]),
                max([p[3] for p in b]),
            )
        )
    return tuple(out)


@dataclass(frozen=True)
class Level:
    start: datetime
    end: datetime
    value: float


@dataclass(frozen=True)
class Marker:
    at: datetime
    direction: str  # slower | faster
    label: str


@dataclass(frozen=True)
class Series:
    label: str
    points: tuple[Point, ...]  # (when, median, q1, q3) in seconds
    levels: tuple[Level, ...] = ()
    markers: tuple[Marker, ...] = ()


def _scale(series: list[Series]) -> tuple[float, str]:
    top = max((p[1] for s in series for p in s.points), default=1.0)
    if top < 1e-3:
        return 1e6, "µs"
    if top < 1:
        return 1e3, "ms"
    return 1.0, "s"


# (step in seconds, label format): the first whose step gives at most `count` ticks over the range
_TIME_STEPS = tuple(
    (step, fmt)
    for fmt, steps in (
        ("%H:%M:%S", (1, 2, 5, 10, 15, 30)),
        ("%H:%M", (60, 120, 300, 600, 900, 1800)),
        ("%m-%d %H:%M", (3600, 3 * 3600, 6 * 3600, 12 * 3600)),
        ("%Y-%m-%d", tuple(days * 86400 for days in (1, 2, 7, 14, 30, 91))),
        ("%Y-%m", (365 * 86400,)),
    )
    for step in steps
)


def time_ticks(lo: float, hi: float, count: int = 8) -> tuple[list[float], str]:
    """Ticks on round times (every 5 s, 15 min, a day, a week ...) for the range shown, at
    most ``count`` of them, and a label format fine enough to tell them apart: runs a
    minute apart are not all labelled with the same minute."""
    span = max(hi - lo, 1.0)
    for step, fmt in _TIME_STEPS:  # noqa: B007  # fmt: the one of the step it stops at
        if span / step <= count - 1:
            break
    local = datetime.fromtimestamp(lo).utcoffset()  # round in local time, as the labels are read
    offset = local.total_seconds() if local else 0.0
    first = math.ceil((lo + offset) / step) * step - offset
    ticks = [first + i * step for i in range(int((hi - first) // step) + 1)] or [lo]
    labels = {datetime.fromtimestamp(t).strftime(fmt) for t in ticks}
    if len(labels) < len(ticks):  # a coarser format would repeat a label: use the full one
        fmt = "%Y-%m-%d %H:%M:%S"
    if (
        fmt in ("%H:%M:%S", "%H:%M")
        and datetime.fromtimestamp(lo).date() != datetime.fromtimestamp(hi).date()
    ):
        fmt = "%m-%d " + fmt
    return ticks, fmt


def nice_ticks(lo: float, hi: float, count: int = 6) -> list[float]:
    """At most ``count`` round values (1, 2 or 5 × 10^k apart) covering [lo, hi]: labels that
    never crowd into one another (0.8 over 0.9, 8 over 9)."""
    if not hi > lo:
        hi, lo = lo + abs(lo) * 0.1 + 1e-9, lo - abs(lo) * 0.1
    raw = (hi - lo) / max(1, count - 1)
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    first = math.floor(lo / step) * step
    ticks: list[float] = []
    t = first
    # up to the first tick at or above hi: no point above the last label
    while len(ticks) < count + 2:
        ticks.append(round(t, 12))
        if t >= hi - step * 1e-9:
            break
        t += step
    return ticks


def _nice_bound(value: float, up: bool) -> float:
    """The nearest 1, 2 or 5 × 10^k at or above (``up``) or at or below ``value`` (> 0)."""
    k = math.floor(math.log10(value))
    marks = [m * 10.0**e for e in (k - 1, k, k + 1) for m in (1, 2, 5)]
    if up:
        return min(m for m in marks if m >= value * (1 - 1e-12))
    return max(m for m in marks if m <= value * (1 + 1e-12))


def log_range(lo: float, hi: float) -> tuple[float, float]:
    """A logarithmic axis' range: out to the 1-2-5 labels around the data, so the top and
    bottom points sit under and over a label, never on the frame beyond the last one."""
    bounds = _nice_bound(lo, up=False), _nice_bound(hi, up=True)
    ticks = log_ticks(*bounds)
    if ticks[0] > bounds[0] * (1 + 1e-9) or ticks[-1] < bounds[1] * (1 - 1e-9):
        # a long span is labelled by decades only: its ends are decades too
        return 10.0 ** math.floor(math.log10(lo)), 10.0 ** math.ceil(math.log10(hi))
    return bounds


def log_ticks(lo: float, hi: float) -> list[float]:
    """1, 2 and 5 × 10^k within [lo, hi] (a logarithmic axis), thinned to decades when many."""
    out = []
    for k in range(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1):
        out += [m * 10**k for m in (1, 2, 5) if lo <= m * 10**k <= hi]
    if len(out) > 8:
        out = [t for t in out if math.log10(t) == round(math.log10(t))]
    return out or [lo, hi]


def tick_label(value: float) -> str:
    return f"{value:.6g}"


def _dots(s: Series, fmt: str, factor: float, unit: str) -> tuple[str, ...] | None:
    """Each run's hover title (when, median, quartiles), where a series has few enough
    points to show them as dots."""
    if len(s.points) >= 30:
        return None
    return tuple(
        f"{s.label} · {datetime.fromtimestamp(p[0].timestamp()).strftime(fmt)}: median "
        f"{tick_label(p[1] * factor)} {unit} (quartiles {tick_label(p[2] * factor)}–"
        f"{tick_label(p[3] * factor)})"
        for p in s.points
    )


def _series_lines(
    s: Series,
    colour: str,
    threshold: float,
    spread: bool,
    dots: tuple[str, ...] | None,
    factor: float,
) -> list[svg.Line]:
    """A series' medians; with its spread shown, its quartiles (dashed) and the threshold
    band around each fitted level."""
    medians = [(p[0].timestamp(), p[1] * factor) for p in s.points]
    out = [svg.Line(medians, colour, s.label, width=1.5, dots=dots)]
    if not spread:
        return out
    for quartile in ([p[2] for p in s.points], [p[3] for p in s.points]):
        line = [(p[0].timestamp(), q * factor) for p, q in zip(s.points, quartile, strict=True)]
        out.append(svg.Line(line, colour, width=1, dash="2,3"))
    band: list[svg.XY | None] = []
    for lv in s.levels:
        for mult in (1 + threshold, 1 / (1 + threshold)):
            band += [
                (lv.start.timestamp(), lv.value * mult * factor),
                (lv.end.timestamp(), lv.value * mult * factor),
                None,
            ]
    if band:
        out.append(svg.Line(band, colour, width=1.5, dash="6,4"))
    return out


def _shift_lines(series: list[Series], lo: float, hi: float) -> list[svg.Line]:
    """The detected shifts as vertical rules over the whole height, one line (and colour)
    per direction."""
    out = []
    for direction in ("slower", "faster"):
        rules: list[svg.XY | None] = []
        for s in series:
            for m in s.markers:
                if m.direction == direction:
                    rules += [(m.at.timestamp(), lo), (m.at.timestamp(), hi), None]
        if rules:
            out.append(svg.Line(rules, SHIFT_COLOUR[direction], f"shift ({direction})", width=2.5))
    return out


def trend_svg(title: str, series: list[Series], threshold: float) -> str:
    """One plot for a check: a line per environment, bands and shifts as described above."""
    most = max(30, MAX_POINTS // max(1, len(series)))
    series = [Series(s.label, _thin(s.points, most), s.levels, s.markers) for s in series]
    factor, unit = _scale(series)
    spread = len(series) <= MAX_SPREAD_SERIES
    tops = sorted(p[1] for s in series for p in s.points)
    lo = min((p[2] for s in series for p in s.points), default=0.0) * factor
    hi = max((p[3] for s in series for p in s.points), default=1.0) * factor
    # one slow outlier must not flatten the rest
    log = bool(tops) and tops[0] > 0 and lo > 0 and tops[-1] / tops[0] > 20
    times = [p[0].timestamp() for s in series for p in s.points]
    tlo, thi = min(times, default=0.0), max(times, default=1.0)
    xticks, xfmt = time_ticks(tlo, thi)
    lines: list[svg.Line] = []
    for i, s in enumerate(series):
        colour = PALETTE[i % len(PALETTE)]
        lines += _series_lines(s, colour, threshold, spread, _dots(s, xfmt, factor, unit), factor)
    lines += _shift_lines(series, lo, hi)
    if log:
        lo, hi = log_range(lo, hi)
        yticks = log_ticks(lo, hi)
    else:
        yticks = nice_ticks(lo, hi)
        lo, hi = min(lo, yticks[0]), max(hi, yticks[-1])
    # a hair beyond the outer labels: no label sits on the frame, the data inside the labels
    ylo, yhi, pad = lo, hi, (hi - lo) * 0.015
    if hi > lo:
        ylo, yhi = (lo / 1.03, hi * 1.03) if log else (lo - pad, hi + pad)
    long_labels = max((len(s.label) for s in series), default=0) > 24
    envs = ", ".join(s.label for s in series) or "no timed run"
    chart = svg.Chart(
        title=title,
        desc=f"Median time per run ({unit}) of {title} over time, "
        f"{len(series)} environment{'s' if len(series) != 1 else ''}: {envs}",
        x=svg.Axis(
            tlo,
            thi,
            [(t, datetime.fromtimestamp(t).strftime(xfmt)) for t in xticks if tlo <= t <= thi],
        ),
        y=svg.Axis(ylo, yhi, [(t, tick_label(t)) for t in yticks], f"median per run ({unit})", log),
        lines=lines,
        legend_columns=2 if long_labels else 4,
    )
    return svg.render(chart)
