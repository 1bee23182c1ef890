"""Trend plots of timed checks as SVG, made with pygal when the site is built.

pygal (pure Python, ~2 MB, ~0.1 s to import, a few ms a chart) draws the median
of each run, the spread of its samples (first and third quartiles, dashed), the
threshold band around each fitted level, and the detected shifts as vertical
rules. ``js=[]``: the SVG loads no script (pygal's default tooltips come from the
network). docs/site.md says why pygal rather than vl-convert or matplotlib.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import pygal
from pygal.style import Style

PALETTE = ("#1f5fbf", "#c2410c", "#15803d", "#7e22ce", "#0e7490", "#a16207", "#be185d", "#4d7c0f", "#475569",
           "#b91c1c")
SHIFT_COLOUR = {"slower": "#d11f1f", "faster": "#15803d"}
MAX_SPREAD_SERIES = 3  # more environments than this on one plot: medians only, spread on the run pages
MAX_POINTS = 600  # per plot: a long history in many environments is drawn as bucket medians


def _thin(points: tuple, most: int) -> tuple:
    """At most ``most`` points: consecutive runs in equal buckets, each drawn at its middle
    run with the median of the bucket's medians (shifts keep their exact runs)."""
    if len(points) <= most:
        return points
    size = -(-len(points) // most)
    out = []
    for i in range(0, len(points), size):
        b = points[i:i + size]
        meds = sorted(p[1] for p in b)
        out.append((b[len(b) // 2][0], meds[len(meds) // 2], min(p[2] for p in b), max(p[3] for p in b)))
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
    points: tuple[tuple[datetime, float, float, float], ...]  # (when, median, q1, q3) in seconds
    levels: tuple[Level, ...] = ()
    markers: tuple[Marker, ...] = ()


def _scale(series: list[Series]) -> tuple[float, str]:
    top = max((p[1] for s in series for p in s.points), default=1.0)
    if top < 1e-3:
        return 1e6, "µs"
    if top < 1:
        return 1e3, "ms"
    return 1.0, "s"


def _ts(dt: datetime) -> float:
    return dt.timestamp()


def _x_labels(series: list[Series], count: int = 8) -> list[float]:
    times = sorted({_ts(p[0]) for s in series for p in s.points})
    if len(times) <= count:
        return times
    step = (len(times) - 1) / (count - 1)
    return [times[round(i * step)] for i in range(count)]


def trend_svg(title: str, series: list[Series], threshold: float, width: int = 1000, height: int = 330) -> str:
    """One plot for a check: a line per environment, bands and shifts as described above.
    Times are plain numbers for pygal (its datetime adapter is most of a plot's cost)."""
    most = max(30, MAX_POINTS // max(1, len(series)))
    series = [Series(s.label, _thin(s.points, most), s.levels, s.markers) for s in series]
    factor, unit = _scale(series)
    spread = len(series) <= MAX_SPREAD_SERIES
    tops = sorted(p[1] for s in series for p in s.points)
    log = bool(tops) and tops[0] > 0 and tops[-1] / tops[0] > 20  # one slow outlier must not flatten the rest
    colours: list[str] = []
    lines: list[tuple[str | None, list, dict]] = []
    lo = min((p[2] for s in series for p in s.points), default=0.0) * factor
    hi = max((p[3] for s in series for p in s.points), default=1.0) * factor
    for i, s in enumerate(series):
        c = PALETTE[i % len(PALETTE)]
        lines.append((s.label, [(_ts(p[0]), p[1] * factor) for p in s.points], {"show_dots": len(s.points) < 30}))
        colours.append(c)
        if spread:
            for k in (2, 3):
                lines.append((None, [(_ts(p[0]), p[k] * factor) for p in s.points],
                              {"show_dots": False, "stroke_style": {"width": 1, "dasharray": "2,3"}}))
                colours.append(c)
            band: list = []
            for lv in s.levels:
                for mult in (1 + threshold, 1 / (1 + threshold)):
                    band += [(_ts(lv.start), lv.value * mult * factor), (_ts(lv.end), lv.value * mult * factor), None]
            if band:
                lines.append((None, band, {"show_dots": False, "allow_interruptions": True,
                                           "stroke_style": {"width": 1.5, "dasharray": "6,4"}}))
                colours.append(c)
    for direction in ("slower", "faster"):
        rules: list = []
        for s in series:
            for m in s.markers:
                if m.direction == direction:
                    rules += [(_ts(m.at), lo), (_ts(m.at), hi), None]
        if rules:
            lines.append((f"shift ({direction})", rules, {"show_dots": False, "allow_interruptions": True,
                                                          "stroke_style": {"width": 2.5}}))
            colours.append(SHIFT_COLOUR[direction])
    style = Style(colors=tuple(colours), background="#ffffff", plot_background="#ffffff",
                  font_family="system-ui, sans-serif", foreground="#333", foreground_strong="#111",
                  foreground_subtle="#e3e3e3", opacity=".9", opacity_hover="1", transition="0s",
                  guide_stroke_color="#ececec", major_guide_stroke_color="#dddddd", title_font_size=15,
                  label_font_size=11, major_label_font_size=11, legend_font_size=12, value_font_size=10)
    chart = pygal.XY(width=width, height=height, style=style, js=[], disable_xml_declaration=True,
                               no_prefix=True, pretty_print=False, show_legend=True, legend_at_bottom=True,
                               legend_at_bottom_columns=2 if max((len(s.label) for s in series), default=0) > 24 else 4,
                               truncate_legend=70,
                               x_label_rotation=20, x_labels=_x_labels(series),
                               x_value_formatter=lambda t: datetime.fromtimestamp(t).strftime("%Y-%m-%d %H:%M"),
                               y_title=f"median per run ({unit})", title=title, allow_interruptions=True,
                               dots_size=2.5, stroke_style={"width": 2}, margin=8, spacing=8,
                               logarithmic=log, range=None if log else ((lo * 0.97, hi * 1.03) if hi > lo else None))
    for label, values, opts in lines:
        chart.add(label, values, **opts)
    return chart.render(is_unicode=True)
