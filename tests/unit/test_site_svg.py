"""The site's own SVG line charts (ext/site/svg.py, drawn for ext/site/plots.py): well-formed
XML whatever the text in them, each point's hover title carrying its value, untrusted
labels as text and never as markup, and no division by zero on short or flat histories."""

from __future__ import annotations

from datetime import datetime, timedelta
from xml.etree import ElementTree

from hypothesis import given, settings
from hypothesis import strategies as st

from orchestrator import encode
from orchestrator.ext.site import plots, svg

NS = "{http://www.w3.org/2000/svg}"
T0 = datetime(2026, 11, 20, 8, 0)
DRAWN = {"svg", "title", "desc", "rect", "text", "g", "path", "circle"}  # all it may hold

HOSTILE = st.one_of(
    st.sampled_from(
        [
            "<script>alert(1)</script>",
            '"><svg onload=alert(1)>',
            "a & b &amp; &#x3c; ]]> <!-- x -->",
            "it's \"quoted\" 'twice'",
            "x" * 5_000,
            "\U0001f680 rocket \U00010348 \U0001f1e9\U0001f1ea",
            "\x00\x1b[2J\x7f\x9b\ufffe\uffff\ud800 \u202e",
        ]
    ),
    st.text(max_size=300),
)


def _series(label: str, medians_ms: list[float]) -> plots.Series:
    pts = tuple(
        (T0 + timedelta(hours=i), m / 1e3, m / 1e3 * 0.98, m / 1e3 * 1.01)
        for i, m in enumerate(medians_ms)
    )
    return plots.Series(label, pts)


def _parse(doc: str) -> ElementTree.Element:
    root = ElementTree.fromstring(doc)
    assert root.tag == NS + "svg"
    return root


def _tags(root: ElementTree.Element) -> set[str]:
    return {el.tag.removeprefix(NS) for el in root.iter()}


def test_a_plot_is_well_formed_titled_and_says_each_points_value():
    doc = plots.trend_svg("kernels.matmul.fp32", [_series("img @ host", [8.0, 8.25, 0.12])], 0.05)
    root = _parse(doc)
    assert _tags(root) <= DRAWN
    assert root.get("role") == "img" and root.get("aria-labelledby") == "chart-title chart-desc"
    assert root.find(NS + "title").text == "kernels.matmul.fp32"
    assert "img @ host" in root.find(NS + "desc").text
    dots = [c.find(NS + "title").text for c in root.iter(NS + "circle")]
    assert len(dots) == 3
    assert "median 8.25 ms" in dots[1] and "img @ host" in dots[1] and "09:00" in dots[1]
    legend = [t.text for t in root.iterfind(f".//{NS}g[@class='legend']//{NS}text")]
    assert legend == ["img @ host"]
    assert doc == plots.trend_svg(  # deterministic: no stamp, no random id
        "kernels.matmul.fp32", [_series("img @ host", [8.0, 8.25, 0.12])], 0.05
    )


@settings(max_examples=150, deadline=None)
@given(title=HOSTILE, label=HOSTILE, tick=HOSTILE)
def test_hostile_text_comes_out_escaped_never_as_markup(title, label, tick):
    doc = plots.trend_svg(title, [_series(label, [1.0, 2.0, 1.5])], 0.05)
    chart = svg.Chart(
        title,
        label,
        svg.Axis(0, 1, [(0.5, tick)], tick),
        svg.Axis(0, 1, [(0.5, tick)], tick),
        [svg.Line([(0, 0), None, (1, 1)], "#000", label, dots=[tick, tick, tick])],
    )
    for out in (doc, svg.render(chart)):
        root = _parse(out)  # well-formed whatever the text: no forbidden character, no stray '<'
        assert _tags(root) <= DRAWN  # no <script>, <foreignObject>, <a> … from the input
        assert not any(a.lower().startswith("on") for el in root.iter() for a in el.attrib)
        # the whole title, as text: what the encoding module makes of it, nothing lost or run
        said = encode.terminal(encode.xml(title)).replace("\r\n", "\n").replace("\r", "\n")
        assert (root.find(NS + "title").text or "") == said  # XML reads a CR as a newline
        for el in root.iter(NS + "text"):  # what is drawn is cut to fit, the hover says it all
            assert len(el.text or "") <= svg.MAX_TITLE


def test_text_survives_exactly_when_it_is_printable():
    label = "<b>&amp; \"q\" 'a' \U0001f680"
    root = _parse(plots.trend_svg(label, [_series(label, [1.0, 2.0])], 0.05))
    assert root.find(NS + "title").text == label
    assert any(el.text == label for el in root.iter(NS + "title"))  # the line's hover title


def test_long_labels_are_cut_in_the_legend_and_whole_in_their_hover():
    label = "env-" + "x" * 300
    root = _parse(plots.trend_svg("c", [_series(label, [1.0, 2.0])], 0.05))
    entry = root.find(f".//{NS}g[@class='legend']/{NS}g")
    assert entry.find(NS + "title").text == label
    shown = entry.find(NS + "text").text
    assert shown.endswith("…") and len(shown) < 120 and label.startswith(shown[:-1])


def test_empty_single_and_flat_histories_draw_without_dividing_by_zero():
    for series in (
        [],
        [_series("one", [])],
        [_series("one", [3.0])],
        [_series("flat", [2.0] * 12)],
        [plots.Series("zero quartile", ((T0, 1e-3, 0.0, 2e-3), (T0, 1e-3, 0.0, 2e-3)))],
        [_series("a", [1.0]), _series("b", [1.0])],
    ):
        doc = plots.trend_svg("c", series, 0.05)
        _parse(doc)
        assert "nan" not in doc.lower() and "inf" not in doc.lower(), series
    for lo, hi, log in ((1.0, 1.0, False), (0.0, 0.0, True), (5.0, 5.0, True), (2.0, 1.0, False)):
        axis = svg.Axis(lo, hi, [(lo, "lo")], log=log)
        doc = svg.render(svg.Chart("c", "d", axis, axis, [svg.Line([(lo, lo), (hi, hi)], "#000")]))
        _parse(doc)
        assert "nan" not in doc.lower() and "inf" not in doc.lower(), (lo, hi, log)
