"""HTML from a jinja2 template (autoescape on): every cell links to the runs behind it."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from jinja2 import Environment, PackageLoader, select_autoescape
from markupsafe import Markup

from .badges import cell_html, note_html
from .breaks import breakable, wbr
from .sections import sectioned, shown_label_headers
from .style import CONTENT
from .style import CSS as PAGE_CSS

if TYPE_CHECKING:
    from ..matrix.document import Document

_env = Environment(
    loader=PackageLoader("orchestrator", "render/templates"),
    autoescape=select_autoescape(default=True, default_for_string=True),
    trim_blocks=True,
    lstrip_blocks=True,
    keep_trailing_newline=True,
)
_env.filters.update(breakable=breakable, wbr=wbr)

# a cell's class by its verdict (a tier's, a component's or a status)
CSS_CLASS = {
    verdict: css
    for css, verdicts in (
        ("ok", "pass ok first-class"),
        ("bad", "fail crash timeout drift broken unsupported-tier"),
        ("none", "unsupported n/a"),
        ("warn", "partial error xfail flaky unpinned best-effort experimental"),
    )
    for verdict in verdicts.split()
}


#: the class of the element a fragment is wrapped in; its stylesheet applies only inside it
SCOPE = "valorch-matrix"
_RULE = re.compile(r"([^{}]+)\{")
_COMMENT = re.compile(r"/\*.*?\*/", re.DOTALL)


def scoped_css(css: str, scope: str = SCOPE) -> str:
    """``css`` with every selector under ``.scope``: a fragment pasted into a page styles
    only itself (no global ``.badge`` rule of the host page is touched)."""

    def one(m: re.Match[str]) -> str:
        sels = ", ".join(f".{scope} {s.strip()}" for s in m.group(1).split(",") if s.strip())
        return f"\n{sels} {{"

    return _RULE.sub(one, _COMMENT.sub("", css))


#: a fragment's stylesheet: the pages' content rules (render/style.py), scoped to it
FRAGMENT_CSS = Markup(scoped_css(CONTENT))  # trusted: made here


def document_html(doc: Document, fragment: bool = False) -> str:
    """A page, or with ``fragment`` the table, notes and run list alone to paste into a
    page: wrapped in ``<div class="valorch-matrix">``, with a stylesheet scoped to it."""
    t = doc.table
    return _env.get_template("matrix.html.j2").render(
        doc=doc,
        table=t,
        css=CSS_CLASS,
        cell_html=cell_html,
        note_html=note_html,
        page_css=PAGE_CSS,
        scoped_css=FRAGMENT_CSS,
        scope=SCOPE,
        fragment=fragment,
        sectioned=sectioned(t),
        heads=(*shown_label_headers(t), *t.columns),
    )
