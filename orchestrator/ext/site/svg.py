"""A line chart as one SVG string (pure, deterministic, no script): what the site's trend
plots draw (ext/site/plots.py), without a plotting library.

Axes with their ticks, labels and guides, titled lines (a gap where a point is None),
dashes, dots whose hover title says the point's value, a legend under the plot, and an
accessible title and description. Every text is untrusted (a check id, an environment's
name): each goes through ``encode.xml`` (no character XML forbids) and ``encode.html``
(no markup, quotes escaped), attributes included; what is not text (colours, dashes) is
the caller's constants. docs/site.md says why not pygal; the figures (a chart in 2–3 ms
against pygal's 16–26 ms) are in docs/benchmarks.md, "Static site build".
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from orchestrator import encode
from orchestrator.words import cut

XY = tuple[float, float]
FONT = "system-ui, sans-serif"
TITLE_SIZE, LABEL_SIZE, LEGEND_SIZE = 15, 11, 12
CHAR = 0.6  # a character's width, in ems: room for labels without measuring text
LEGEND_ROW = 22
MAX_TITLE = 120  # characters of a title drawn (all of the chart's in <title>)
MAX_TICK = 40  # characters of a tick's label


@dataclass(frozen=True)
class Line:
    points: Sequence[XY | None]  # None breaks the line
    colour: str
    label: str | None = None  # in the legend and the line's hover title; None: in neither
    width: float = 2.0
    dash: str = ""  # stroke-dasharray, e.g. "2,3"
    dots: Sequence[str] | None = None  # one hover title per point (None entries included)


@dataclass(frozen=True)
class Axis:
    lo: float
    hi: float
    ticks: Sequence[tuple[float, str]] = ()  # (value, label), inside [lo, hi]
    title: str = ""
    log: bool = False


@dataclass(frozen=True)
class Chart:
    title: str
    desc: str
    x: Axis
    y: Axis
    lines: Sequence[Line] = ()
    width: int = 1000
    height: int = 330  # the legend's rows beyond the first add to it
    legend_columns: int = 4


def text(value: str) -> str:
    """Untrusted text as SVG character data or an attribute value."""
    return encode.html(encode.xml(value))


def _n(v: float) -> str:
    return f"{v:.1f}"


class _Scale:
    """Data → pixels along one axis (``flip``: y grows downwards)."""

    def __init__(self, axis: Axis, size: float, flip: bool) -> None:
        self.log = axis.log and axis.lo > 0
        lo, hi = axis.lo, axis.hi
        if self.log:
            lo, hi = math.log10(lo), math.log10(max(hi, axis.lo))
        if not hi > lo:  # one value, or none: the middle of the axis
            lo, hi = lo - 1.0, hi + 1.0
        self.lo, self.k, self.size, self.flip = lo, size / (hi - lo), size, flip

    def __call__(self, v: float) -> float | None:
        if self.log:
            if not v > 0:
                return None
            v = math.log10(v)
        p = (v - self.lo) * self.k
        return self.size - p if self.flip else p


def _path(points: Sequence[XY | None], sx: _Scale, sy: _Scale) -> str:
    out, pen = [], "M"
    for pt in points:
        x = sx(pt[0]) if pt is not None else None
        y = sy(pt[1]) if pt is not None else None
        if x is None or y is None:
            pen = "M"
            continue
        out.append(f"{pen}{_n(x)} {_n(y)}")
        pen = "L"
    return " ".join(out)


def _width(labels: Sequence[str], size: float) -> float:
    return max((len(s) for s in labels), default=0) * size * CHAR


def render(chart: Chart) -> str:
    labelled = [ln for ln in chart.lines if ln.label is not None]
    columns = max(1, chart.legend_columns)
    rows = -(-len(labelled) // columns)
    height = chart.height + max(0, rows - 1) * LEGEND_ROW
    xticks = [(v, cut(label, MAX_TICK)) for v, label in chart.x.ticks]
    yticks = [(v, cut(label, MAX_TICK)) for v, label in chart.y.ticks]
    xlabels = [label for _v, label in xticks]
    slant = _width(xlabels, LABEL_SIZE)  # x labels turned 20°: this long, leaning right
    left = (
        8
        + (LABEL_SIZE + 6 if chart.y.title else 0)
        + _width([s for _v, s in yticks], LABEL_SIZE)
        + 6
    )
    right = max(16.0, slant * math.cos(math.radians(20)) + 6)
    top = 34
    bottom = 14 + slant * math.sin(math.radians(20)) + LABEL_SIZE + 8 + rows * LEGEND_ROW
    pw, ph = max(10.0, chart.width - left - right), max(10.0, height - top - bottom)
    sx, sy = _Scale(chart.x, pw, False), _Scale(chart.y, ph, True)
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {chart.width} {height}" '
        f'width="{chart.width}" height="{height}" role="img" aria-labelledby="chart-title chart-desc" '
        f'font-family="{FONT}" font-size="{LABEL_SIZE}" fill="#333">',
        f'<title id="chart-title">{text(chart.title)}</title>',
        f'<desc id="chart-desc">{text(chart.desc)}</desc>',
        f'<rect width="{chart.width}" height="{height}" fill="#ffffff"/>',
        f'<text class="title" x="{chart.width / 2:.1f}" y="22" text-anchor="middle" '
        f'font-size="{TITLE_SIZE}" fill="#111">{text(cut(chart.title, MAX_TITLE))}</text>',
    ]
    if chart.y.title:
        mid = top + ph / 2
        out.append(
            f'<text class="axis-title" x="{LABEL_SIZE + 2}" y="{_n(mid)}" text-anchor="middle" '
            f'transform="rotate(-90 {LABEL_SIZE + 2} {_n(mid)})">{text(cut(chart.y.title, MAX_TITLE))}</text>'
        )
    out.append(f'<g class="plot" transform="translate({_n(left)} {top})">')
    out.append('<g class="y-axis" text-anchor="end">')
    for v, label in yticks:
        y = sy(v)
        if y is not None:
            out.append(
                f'<path d="M0 {_n(y)}H{_n(pw)}" stroke="#dddddd"/>'
                f'<text x="-5" y="{_n(y + LABEL_SIZE / 3)}">{text(label)}</text>'
            )
    out.append('</g><g class="x-axis">')
    ly = ph + 14
    for v, label in xticks:
        x = sx(v)
        if x is not None:
            out.append(
                f'<path d="M{_n(x)} 0V{_n(ph)}" stroke="#ececec"/><text x="{_n(x)}" y="{_n(ly)}" '
                f'transform="rotate(20 {_n(x)} {_n(ly)})">{text(label)}</text>'
            )
    out.append(f'</g><path class="frame" d="M0 0V{_n(ph)}H{_n(pw)}" stroke="#333" fill="none"/>')
    for i, ln in enumerate(chart.lines):
        dash = f' stroke-dasharray="{ln.dash}"' if ln.dash else ""
        hover = f"<title>{text(ln.label)}</title>" if ln.label is not None else ""
        out.append(
            f'<g class="series series-{i}"><path class="line" d="{_path(ln.points, sx, sy)}" fill="none" '
            f'stroke="{ln.colour}" stroke-width="{ln.width:g}"{dash} stroke-linejoin="round">{hover}</path>'
        )
        for pt, title in zip(ln.points, ln.dots or (), strict=False):
            x, y = (sx(pt[0]), sy(pt[1])) if pt is not None else (None, None)
            if x is not None and y is not None:
                out.append(
                    f'<circle cx="{_n(x)}" cy="{_n(y)}" r="2.5" fill="{ln.colour}"><title>{text(title)}</title></circle>'
                )
        out.append("</g>")
    out.append("</g>")
    out += _legend(labelled, columns, left, height - rows * LEGEND_ROW - 6, pw)
    out.append("</svg>")
    return "".join(out)


def _legend(lines: Sequence[Line], columns: int, left: float, y0: float, width: float) -> list[str]:
    """The labelled lines under the plot, ``columns`` to a row, each cut to its column."""
    if not lines:
        return []
    col = width / columns
    most = max(4, int((col - 22) / (LEGEND_SIZE * CHAR)))
    out = [f'<g class="legend" font-size="{LEGEND_SIZE}">']
    for i, ln in enumerate(lines):
        x, y = left + (i % columns) * col, y0 + (i // columns) * LEGEND_ROW
        label = ln.label or ""
        out.append(
            f'<g><title>{text(label)}</title><rect x="{_n(x)}" y="{_n(y)}" width="12" height="12" '
            f'fill="{ln.colour}"/><text x="{_n(x + 17)}" y="{_n(y + 10)}">{text(cut(label, most))}</text></g>'
        )
    out.append("</g>")
    return out
