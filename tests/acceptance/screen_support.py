"""A page as a person sees it at a given width, measured in headless Chromium: the page is
copied beside itself with a probe script appended, loaded with the network off, and the
probe's findings read back from the DOM Chromium dumps.

What the probe reports (after the load event, so images and the page's own scripts are in,
with every <details> opened):
- ``overflowing``: a cell past the right edge of the viewport (outside a scrolling wrapper),
  a cell whose content is wider than the cell, a scrolling wrapper past the viewport, or a
  page wider than the viewport;
- ``scrolled``: cells past the viewport inside a scrolling wrapper (allowed for a matrix);
- ``overlaps``: two panes (grid panes, tables, plots, scrolling wrappers) that overlap;
- ``splits``: a header cell whose text breaks between two lines inside a token (between two
  characters of one name, not after a separator such as ``_``)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--hide-scrollbars",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

PROBE = r"""
<script>
window.addEventListener('load', function () {
  var W = window.innerWidth, out = {width: W, overflowing: [], scrolled: [], overlaps: [], splits: []};
  Array.prototype.forEach.call(document.querySelectorAll('details'), function (d) { d.open = true; });
  function label(el) {
    return el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') +
      (typeof el.className === 'string' && el.className ? '.' + el.className.split(' ')[0] : '') + ' "' + (el.textContent || '').trim().replace(/\s+/g, ' ').slice(0, 50) + '"';
  }
  function scroller(el) {
    for (var p = el.parentElement; p; p = p.parentElement) {
      var o = getComputedStyle(p).overflowX;
      if (o === 'auto' || o === 'scroll') { return p; }
    }
    return null;
  }
  function shown(el) { return el.getClientRects().length > 0; }
  if (document.documentElement.scrollWidth > W + 1) {
    out.overflowing.push('the page is ' + document.documentElement.scrollWidth + ' px wide');
  }
  Array.prototype.forEach.call(document.querySelectorAll('td, th'), function (c) {
    if (!shown(c)) { return; }
    var r = c.getBoundingClientRect(), box = scroller(c);
    if (r.right > W + 1) { (box ? out.scrolled : out.overflowing).push(label(c) + ' ends at ' + Math.round(r.right)); }
    if (c.scrollWidth > c.clientWidth + 1) {
      out.overflowing.push(label(c) + ' holds ' + c.scrollWidth + ' px in ' + c.clientWidth);
    }
  });
  Array.prototype.forEach.call(document.querySelectorAll('.scroll, .wrap'), function (b) {
    if (shown(b) && b.getBoundingClientRect().right > W + 1) { out.overflowing.push('wrapper ' + label(b)); }
  });
  var panes = Array.prototype.filter.call(
    document.querySelectorAll('.grid > *, table, img, .scroll, .wrap, svg'),
    function (el) { return shown(el) && !(el.tagName === 'TABLE' && el.parentElement.closest('table')) && !el.closest('td, th'); });
  for (var i = 0; i < panes.length; i++) {
    for (var j = i + 1; j < panes.length; j++) {
      var a = panes[i], b = panes[j];
      if (a.contains(b) || b.contains(a)) { continue; }
      var p = a.getBoundingClientRect(), q = b.getBoundingClientRect();
      var w = Math.min(p.right, q.right) - Math.max(p.left, q.left);
      var h = Math.min(p.bottom, q.bottom) - Math.max(p.top, q.top);
      if (w > 1 && h > 1) { out.overlaps.push(label(a) + ' overlaps ' + label(b)); }
    }
  }
  Array.prototype.forEach.call(document.querySelectorAll('tr'), function (row) {
    if (row.querySelector('td') || !shown(row)) { return; }  // header rows only: every cell a th
    Array.prototype.forEach.call(row.querySelectorAll('th'), function (th) {
      var walk = document.createTreeWalker(th, NodeFilter.SHOW_TEXT), node;
      while ((node = walk.nextNode())) {
        var text = node.data, prev = null;
        for (var k = 0; k < text.length; k++) {
          var range = document.createRange();
          range.setStart(node, k); range.setEnd(node, k + 1);
          var rects = range.getClientRects();
          if (!rects.length || /\s/.test(text[k])) { prev = null; continue; }
          var top = rects[0].top;
          if (prev !== null && top > prev.top + 2 && !/[\s_\/:@\-·,(]/.test(text[k - 1])) {
            out.splits.push(text.slice(0, k) + ' | ' + text.slice(k));
          }
          prev = {top: top};
        }
      }
    });
  });
  var pre = document.createElement('pre');
  pre.id = 'valorch-probe';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
</script>
"""


def chromium() -> str:
    exe = shutil.which("chromium")
    if exe is None:
        raise AssertionError("headless Chromium is needed (apt-get install chromium)")
    return exe


def _browse(page: Path, width: int, profile: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [
            "unshare",
            "--net",
            chromium(),
            *FLAGS,
            f"--window-size={width},1000",
            f"--user-data-dir={profile}",
            *extra,
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )


def measure(page: Path, width: int, tmp: Path, shot: Path | None = None) -> dict:
    """What the probe found on ``page`` at ``width`` px (and a screenshot of it)."""
    if shot is not None:
        _browse(page, width, tmp / "profile", f"--screenshot={shot}")
    probed = page.with_name(f".probe-{width}-{page.name}")  # beside it: relative links hold
    html = page.read_text(encoding="utf-8")
    cut = html.rfind("</body>")
    probed.write_text(
        html[:cut] + PROBE + html[cut:] if cut >= 0 else html + PROBE, encoding="utf-8"
    )
    try:
        dom = _browse(probed, width, tmp / "profile", "--dump-dom").stdout
    finally:
        probed.unlink()
    start = dom.find('<pre id="valorch-probe">')
    assert start >= 0, f"the probe did not run on {page}"
    body = dom[start + len('<pre id="valorch-probe">') : dom.index("</pre>", start)]
    found = json.loads(body.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&"))
    assert found["width"] == width, found  # the viewport is the width asked for
    return found
