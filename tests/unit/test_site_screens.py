"""What keeps the site's pages honest and on screen (pure): headers that break only between
a name's parts, plot axes whose labels enclose every point, a trend text that names what
the step detector decided, status flips, which published versions are diffed, and a
fragment stylesheet that styles only the fragment."""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from xml.etree import ElementTree

from hypothesis import given, settings
from hypothesis import strategies as st
from markupsafe import escape

from orchestrator.ext.site import plots
from orchestrator.ext.site import trend as site_trend
from orchestrator.ext.site.pages import breakable, wbr
from orchestrator.ext.site.service import related
from orchestrator.ext.site.views import History, Point, Res, RunV, flips
from orchestrator.regression import changepoints
from orchestrator.render.badges import CSS
from orchestrator.render.html import FRAGMENT_CSS, SCOPE, scoped_css

T0 = datetime(2026, 11, 20, 8, 0)

# --- headers --------------------------------------------------------------------------------------

NAMES = st.text(alphabet="abcpy0123456789._-:/@", min_size=1, max_size=60)


@given(NAMES)
def test_a_header_breaks_only_after_a_separator(name):
    html = str(breakable(name))
    parts = re.findall(r'<span class="tok">([^<]*)</span>', html)
    assert "".join(parts).replace("&#39;", "'") == name  # nothing lost, nothing added
    assert html.count("<wbr>") == len(parts) - 1
    for part in parts[:-1]:  # a break opportunity only after _ / : @, never inside "3.11"
        assert part[-1] in "_/:@", (name, parts)
    assert all("." not in p[:-1] or p[-1] in "_/:@" or p == parts[-1] for p in parts)


@given(NAMES)
def test_ids_wrap_between_parts_never_inside_a_version(text):
    html = str(wbr(text))
    assert html.replace("<wbr>", "") == str(escape(text))
    assert not re.search(r"\.<wbr>\d", html)  # "2.<wbr>13" would read as two numbers
    assert not re.search(r"[A-Za-z0-9]<wbr>", html)  # never between two letters or digits


def test_version_tokens_stay_whole():
    parts = re.findall(r">([^<]*)</span>", str(breakable("cpu_debian12_py3.11_pytorch_1.13")))
    assert parts == ["cpu_", "debian12_", "py3.11_", "pytorch_", "1.13"]
    assert str(wbr("pytest.a_b")) == "pytest.<wbr>a_<wbr>b"
    assert "<b>" not in str(breakable("<b>x_y</b>"))


# --- plot axes ------------------------------------------------------------------------------------

POSITIVE = st.floats(min_value=1e-7, max_value=1e4, allow_nan=False, allow_infinity=False)


@settings(max_examples=300, deadline=None)
@given(POSITIVE, POSITIVE)
def test_axis_labels_enclose_every_point(a, b):
    lo, hi = min(a, b), max(a, b)
    ticks = plots.nice_ticks(lo, hi)
    assert ticks[0] <= lo + 1e-12 and ticks[-1] >= hi - 1e-9 * hi, (lo, hi, ticks)
    assert 2 <= len(ticks) <= 8
    if hi / lo > 1.01:
        rlo, rhi = plots.log_range(lo, hi)
        logs = plots.log_ticks(rlo, rhi)
        assert logs[0] <= lo * (1 + 1e-9) and logs[-1] >= hi * (1 - 1e-9), (lo, hi, logs)


def _series(medians_ms):
    pts = tuple(
        (T0 + timedelta(hours=i), m / 1e3, m / 1e3 * 0.98, m / 1e3 * 1.01)
        for i, m in enumerate(medians_ms)
    )
    return [plots.Series("host @ host", pts)]


def _labels_and_points(svg):
    """{y label's value: its y} and the y of each point of the first series (ElementTree)."""
    ns = {"s": "http://www.w3.org/2000/svg"}
    root = ElementTree.fromstring(svg)
    labels = {
        float(t.text): float(t.get("y")) - 11 / 3  # drawn a third of the font under its guide
        for t in root.iterfind(".//s:g[@class='y-axis']/s:text", ns)
    }
    path = root.find(".//s:g[@class='series series-0']/s:path", ns).get("d")
    ys = [float(xy.split(" ")[1]) for xy in re.split(r" ?[ML]", path) if xy]
    return labels, ys


def test_no_point_sits_above_the_top_label():
    """8 ms then 0.12 ms (a log axis): the top label is above 8, not 5 under it."""
    svg = plots.trend_svg("kernels.matmul.fp32", _series([8.0, 8.0, 0.12, 0.12]), 0.05)
    labels, ys = _labels_and_points(svg)
    assert max(labels) >= 8.0, labels
    assert min(ys) > labels[max(labels)], (ys, labels)  # SVG y grows downwards
    svg = plots.trend_svg("x", _series([8.1, 8.3, 8.2, 7.9]), 0.05)  # a linear axis
    labels, ys = _labels_and_points(svg)
    assert max(labels) >= 8.3 and min(ys) >= labels[max(labels)], (ys, labels)


# --- what the detector decided --------------------------------------------------------------------


def _history(medians, rejected=None):
    pts = [
        Point(f"run{i:05d}-x", T0 + timedelta(hours=i), m, m, m, 10, False)
        for i, m in enumerate(medians)
    ]
    h = History("kernels.matmul.fp32", "host @ host", pts, 0.05)
    h.analysis = changepoints.analyse(medians, 0.05)
    if rejected is not None:  # what site_steps.confirmed does when the diff disagrees
        h.rejected = tuple((s, rejected, pts[s.start - 1].run_id) for s in h.analysis.shifts)
        h.analysis = changepoints.Analysis(h.analysis.segments, (), h.analysis.sigma)
    return h


def test_the_trend_text_names_every_step_the_plot_shows():
    too_few = site_trend.decision(_history([0.008, 0.00012, 0.00012]))
    assert too_few["decided"] == "no step called"
    assert "3 runs here, the detector needs at least 4" in too_few["why"]
    step = [0.008, 0.008, 0.00012, 0.00012]
    found = site_trend.decision(_history(step))
    assert found["decided"] == "change detected" and "faster" in found["why"]
    assert "8 ms → 120 µs" in found["why"]
    rejected = site_trend.decision(_history(step, rejected="noise"))
    assert rejected["decided"] == "no step called"
    assert "8 ms → 120 µs" in rejected["why"] and "calls it noise" in rejected["why"]
    assert "valorch diff run00001 run00002" in rejected["why"]
    flat = site_trend.decision(_history([0.008] * 6))
    assert flat["decided"] == "no step or drift" and "6 runs at one level (8 ms)" in flat["why"]


# --- status flips ---------------------------------------------------------------------------------


def _run(i, verdicts, alias="img"):
    row = {
        "id": f"r{i}",
        "alias": alias,
        "host": "h",
        "state": "done",
        "started": T0 + timedelta(hours=i),
    }
    run = RunV(row)
    for check, status in verdicts.items():
        run.results[check] = Res(check, 1, "s", [status], 0.1, "")
    return run


def test_status_flips_both_ways_per_environment():
    runs = {
        r.id: r
        for r in (
            _run(0, {"a": "pass", "b": "fail"}),
            _run(1, {"a": "error", "b": "fail"}),  # inconclusive: neither a flip nor a reset
            _run(2, {"a": "fail", "b": "pass"}),
            _run(3, {"a": "fail"}, alias="other"),  # another environment: nothing to flip from
        )
    }
    got = [(f.check, f.before, f.after, f.prev_run, f.run) for f in flips(runs)]
    assert sorted(got) == [("a", "pass", "fail", "r0", "r2"), ("b", "fail", "pass", "r1", "r2")]


# --- which versions are diffed --------------------------------------------------------------------


def _doc(job=None, runs=(), columns=("host",), layout="checks"):
    cells = {c: {"runs": list(runs)} for c in columns}
    return {
        "layout": layout,
        "params": {"job": job} if job else {},
        "columns": list(columns),
        "rows": [{"key": "k", "cells": cells}],
    }


def test_only_versions_of_one_job_are_diffed():
    runs = {
        "r1": RunV({"job": "rel-host"}),
        "r2": RunV({"job": "hb-rel"}),
        "r3": RunV({"job": "hb-rel"}),
    }
    assert not related(_doc(runs=["r1"]), _doc(runs=["r2"], columns=("cpu_1.13",)), runs)
    assert related(_doc(runs=["r2"]), _doc(runs=["r3"], columns=("cpu_2.13",)), runs)
    assert not related(_doc("a", ["r2"]), _doc("b", ["r3"]), runs)  # different --job
    assert not related(_doc(runs=["r2"]), _doc(runs=["r3"], layout="features"), runs)
    # runs pruned from the store: a column in common decides
    assert related(_doc(runs=["gone"]), _doc(runs=["gone2"]), runs)
    assert not related(_doc(runs=["gone"]), _doc(runs=["gone2"], columns=("x",)), runs)


# --- the fragment's stylesheet --------------------------------------------------------------------


def test_fragment_stylesheet_has_no_global_rule():
    css = scoped_css(str(CSS)) + str(FRAGMENT_CSS)
    selectors = [s.strip() for rule in re.findall(r"([^{}]+)\{", css) for s in rule.split(",")]
    assert len(selectors) >= 10
    assert all(s.startswith(f".{SCOPE} ") for s in selectors), selectors
    assert scoped_css(".a, .b:hover { x: 1 }\n.c { y: 2 }") == (
        f"\n.{SCOPE} .a, .{SCOPE} .b:hover {{ x: 1 }}\n.{SCOPE} .c {{ y: 2 }}"
    )
