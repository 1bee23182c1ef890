"""Every link valorch writes from a user's text is an http(s) URL: ``encode.href`` is the one
check, the known-issues model refuses anything else at load, and the HTML, Markdown and
JUnit diff link only what it returns (a legitimate link renders as a link in Markdown)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from orchestrator import encode
from orchestrator.errors import SpecError
from orchestrator.regression import known_issues
from orchestrator.regression.rule import CellChange, Report, Side
from orchestrator.regression.waivers import Waiver
from orchestrator.render.diff import diff_html, diff_junit, diff_md
from orchestrator.spec import EXPECTED

HOSTILE = [
    "javascript:alert(document.domain)",
    "JaVaScRiPt:alert(1)",
    " javascript:alert(1)",
    "data:text/html,<script>alert(1)</script>",
    "vbscript:msgbox(1)",
    'https://x.org/"onmouseover=alert(1)',
    "https://x.org/a b",
    "https://user:pw@x.org/",
    "http://",
    "//x.org/a",
    "https://x.org/a|b",
    "https://x.org/<script>",
    "file:///etc/passwd",
    "https://x.org:notaport/",
]


@pytest.mark.parametrize("url", HOSTILE)
def test_a_link_that_is_not_http_is_refused_at_load(tmp_path, url):
    path = tmp_path / "known-issues.yaml"
    path.write_text(f"issues:\n  - check: x.y\n    reason: r\n    url: {url!r}\n")
    with pytest.raises(SpecError) as err:
        known_issues.load(path)
    assert f"{path}:4" in err.value.message and "url" in err.value.message


@given(st.text(max_size=60))
def test_href_returns_only_http_urls_without_markup(text):
    got = encode.href(text)
    if got is not None:
        assert got == text
        assert re.match(r"https?://[^/?#]", got, re.IGNORECASE)
        assert not set(got) & set(" \t\n\r\"'<>`|\\")


@given(st.sampled_from(["http", "https"]), st.from_regex(r"[a-z0-9]{1,10}\.org", fullmatch=True))
def test_href_keeps_every_plain_http_link(scheme, host):
    assert encode.href(f"{scheme}://{host}/issues/1") == f"{scheme}://{host}/issues/1"


def _report(url: str) -> Report:
    issue = Waiver("selftest.fail", "planted", url=url)
    change = CellChange("img", "selftest.fail", EXPECTED, "pass", "fail", issue=issue)
    side = Side("a", "run", ())
    return Report(base=side, head=side, threshold=0.05, changes=(change,))


def test_a_legitimate_link_is_a_link_in_every_report():
    url = "https://tracker.example/issues/1?a=1&b=(2)"
    assert f"([link](<{url}>))" in diff_md(_report(url))
    assert 'href="https://tracker.example/issues/1?a=1&amp;b=(2)"' in diff_html(_report(url))
    assert url.replace("&", "&amp;") in diff_junit(_report(url))


@pytest.mark.parametrize("url", HOSTILE)
def test_a_hostile_link_that_reached_a_renderer_is_not_linked(url):
    """A Waiver built around the model (a stored or hand-built one) is checked at the sink."""
    html = diff_html(_report(url))
    assert "javascript:" not in html.lower() and 'href="data' not in html
    assert 'href="' + url not in html
    md = diff_md(_report(url))
    assert "[link]" not in md
