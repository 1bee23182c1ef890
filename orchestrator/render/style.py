"""The one stylesheet of every HTML page valorch writes: the site's pages, the standalone
matrix (``matrix render --format html``) and the diff/qualify report. Each page adds only
its own few rules after it.

How text wraps, everywhere:
- a name (check id, image alias, reference) wraps at the ``<wbr>`` that
  ``render/breaks.py`` puts after its separators; a header or a matrix cell never inside
  a part (``overflow-wrap: normal``): ``compile.inductor.mlp`` never shows as
  ``compile.i / nductor.m / lp``; another cell only where the token cannot fit whole;
- free text (a failure's detail, an error message, a digest: ``td.msg``, ``td.long``,
  ``.detail``, ``pre``) may break anywhere, so that one 300-character symbol cannot widen
  the page;
- a table too wide for the window scrolls inside its own frame (``.scroll``), never the
  page.

``CONTENT`` styles what a page holds (tables, cells, badges, code) and has no selector
outside it, so a matrix fragment pasted into another page takes it scoped to itself
(``render/html.py``); ``PAGE`` adds the page itself (body, headings, narrow windows)."""

from __future__ import annotations

from markupsafe import Markup

from .badges import CSS_TEXT as BADGES

CONTENT = (
    """
table { border-collapse: collapse; margin: 0.4em 0 1.2em; max-width: 100%; }
th, td { border: 1px solid #d9dde3; padding: 0.28em 0.55em; text-align: left; vertical-align: top; }
th, th code { overflow-wrap: normal; word-break: normal; }
td { overflow-wrap: break-word; word-break: normal; } /* breaks a token only if it cannot fit whole */
table.names td, table.names td code { overflow-wrap: normal; } /* a matrix: names never break inside */
table.names th[scope=row] { min-width: 16em; max-width: 28em; } /* a reference is not squeezed */
table.names td { min-width: 5.5em; }
thead th, tr.head th { background: #f4f6f8; }
tr.section th { background: #eef1f5; text-align: left; }
.tok { white-space: nowrap; }
td.msg, td.long, .detail, .kv td { overflow-wrap: anywhere; }
td.msg, td.detail { min-width: 14em; }
pre, td.msg code, td.long code, .detail code, .kv td code { overflow-wrap: anywhere; word-break: normal; }
pre { white-space: pre-wrap; max-width: 100%; }
code, .mono, pre { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 0.93em; }
.scroll { overflow-x: auto; max-width: 100%; }
.scroll > table { margin: 0; }
.runs { font-size: 0.75em; color: #5f6670; }
td.ok { background: #e6f4ea; } td.bad { background: #fce8e6; } td.warn { background: #fef7e0; }
td.flag-stale, td.flag-previous-digest { background-image: repeating-linear-gradient(135deg, transparent 0 6px, rgba(0,0,0,.06) 6px 8px); color: #5f6670; }
td.flag-stale .badge, td.flag-previous-digest .badge { opacity: .6; }
.muted { color: #5f6670; } .small { font-size: 0.85em; }
"""
    + BADGES
)

PAGE = """
:root { --line: #d9dde3; --muted: #5f6670; --head: #f4f6f8; }
* { box-sizing: border-box; }
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; margin: 0; color: #1d232b; font-size: 14px; }
main { padding: 1em 1.4em 3em; max-width: 100%; }
h1 { font-size: 1.45em; margin: 0.3em 0 0.5em; } h2 { font-size: 1.15em; margin: 1.4em 0 0.5em; }
h1, h2, p, li { overflow-wrap: anywhere; }
a { color: #1451b8; }
@media (max-width: 900px) { main { padding: 0.8em 0.8em 2em; } td.msg, td.detail { min-width: 9em; } }
"""

#: the whole stylesheet of a page (trusted: made here, inserted unescaped into <style>)
CSS = Markup(PAGE + CONTENT)
