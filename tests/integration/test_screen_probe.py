"""The screen probe that the page-layout tests rely on (tests/acceptance/screen_support.py)
finds each kind of fault it claims to, in one headless Chromium kept for all the pages, and
nothing on a page without one: a test of a page that fits is only worth the probe's power to
see one that does not."""

from __future__ import annotations

import struct

import pytest

from tests.acceptance.screen_support import measure

pytestmark = pytest.mark.browser

STYLE = "<style>body{margin:0;font:16px sans-serif} th,td{border:1px solid #999}</style>"
PAGES = {
    "fits": "<table><tr><th>name</th></tr><tr><td>x</td></tr></table>",
    "wide page": '<div style="width:2000px">wide</div>',
    "cell spills": '<table><tr><td style="max-width:40px;overflow:hidden;white-space:nowrap">'
    + "spilling_text_" * 8
    + "</td></tr></table>",
    "cell past the edge": '<table style="width:1200px"><tr><td>a</td><td>b</td></tr></table>',
    "scrolls in its frame": '<div class="scroll" style="overflow-x:auto">'
    '<table style="width:1200px"><tr><td>a</td><td>b</td></tr></table></div>',
    "panes overlap": '<table style="position:absolute;top:0;left:0"><tr><td>one</td></tr></table>'
    '<table style="position:absolute;top:5px;left:5px"><tr><td>two</td></tr></table>',
    "header split": '<table><tr><th style="width:30px;word-break:break-all">'
    "averyveryverylongname</th></tr><tr><td>x</td></tr></table>",
    "closed details": "<details><summary>s</summary>"
    '<div style="width:2000px">only when open</div></details>',
}
FINDS = {
    "fits": set(),
    "wide page": {"overflowing"},
    "cell spills": {"overflowing"},
    "cell past the edge": {"overflowing"},
    "scrolls in its frame": {"scrolled"},
    "panes overlap": {"overlaps"},
    "header split": {"splits"},
    "closed details": {"overflowing"},  # the probe opens every <details>
}


def test_the_probe_finds_each_fault_and_none_on_a_page_that_fits(screen, tmp_path):
    found = {}
    for name, body in PAGES.items():
        page = tmp_path / (name.replace(" ", "-") + ".html")
        page.write_text(f"<!doctype html><html><head>{STYLE}</head><body>{body}</body></html>")
        shot = tmp_path / (page.stem + ".png")
        result = measure(screen, page, 800, shot)
        found[name] = {k for k in ("overflowing", "scrolled", "overlaps", "splits") if result[k]}
        assert struct.unpack(">II", shot.read_bytes()[16:24]) == (800, 1000), name
    assert found == FINDS


def test_one_browser_loads_page_after_page_at_the_width_asked(screen, tmp_path):
    page = tmp_path / "p.html"
    page.write_text("<body><script>document.body.dataset.w = window.innerWidth</script></body>")
    for width in (1400, 800, 1400):
        screen.load(page, width)
        assert f'data-w="{width}"' in screen.dom()
