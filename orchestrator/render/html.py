"""HTML from a jinja2 template (autoescape on): every cell links to the runs behind it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from jinja2 import Environment, PackageLoader, select_autoescape

from .badges import CSS as BADGE_CSS
from .badges import cell_html, note_html
from .sections import sectioned, shown_label_headers

if TYPE_CHECKING:
    from ..matrix.document import Document

_env = Environment(
    loader=PackageLoader("orchestrator", "render/templates"),
    autoescape=select_autoescape(default=True, default_for_string=True),
    trim_blocks=True,
    lstrip_blocks=True,
    keep_trailing_newline=True,
)

CSS_CLASS = {
    "pass": "ok",
    "ok": "ok",
    "fail": "bad",
    "crash": "bad",
    "timeout": "bad",
    "unsupported": "none",
    "n/a": "none",
    "partial": "warn",
    "drift": "bad",
    "broken": "bad",
    "error": "warn",
    "xfail": "warn",
    "flaky": "warn",
    "unpinned": "warn",
    "first-class": "ok",
    "best-effort": "warn",
    "experimental": "warn",
    "unsupported-tier": "bad",
}


def document_html(doc: Document, fragment: bool = False) -> str:
    """A page, or with ``fragment`` the table, notes and run list alone (with the badges'
    stylesheet) to paste into a page."""
    t = doc.table
    return _env.get_template("matrix.html.j2").render(
        doc=doc,
        table=t,
        css=CSS_CLASS,
        cell_html=cell_html,
        note_html=note_html,
        badge_css=BADGE_CSS,
        fragment=fragment,
        sectioned=sectioned(t),
        heads=(*shown_label_headers(t), *t.columns),
    )
