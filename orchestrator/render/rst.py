"""reStructuredText: a ``list-table`` shaped like rocm-pytorch-compatibility.rst."""

from __future__ import annotations

import unicodedata
from typing import TYPE_CHECKING

from .. import encode
from .sections import sections, shown_label_headers, shown_labels

if TYPE_CHECKING:
    from ..matrix.document import Document

_text = encode.rst  # inline text with RST markup characters escaped, on one line


def _columns(text: str) -> int:
    """The columns docutils measures a title by: wide and full-width characters count two,
    combining characters none (an over/underline shorter than that is an RST error)."""
    return sum(
        0 if unicodedata.combining(c) else 2 if unicodedata.east_asian_width(c) in "WF" else 1
        for c in text
    )


def _literal(value: str) -> str:
    return (
        f"``{' '.join(encode.one_line(value).split())}``"
        if value and "``" not in value
        else _text(value)
    )


def _list_table(title: str, heads: tuple[str, ...], rows: list[list[str]]) -> list[str]:
    if not rows:  # docutils refuses a list-table with no body
        return [f"*{_text(title)}: no rows.*" if title else "*No rows.*", ""]
    lines = [f".. list-table:: {_text(title)}".rstrip(), "    :header-rows: 1", ""]
    for i, h in enumerate(heads):
        lines.append(f"    {'* -' if i == 0 else '  -'} {_text(h)}".rstrip())
    for values in rows:
        lines.append("")
        for i, v in enumerate(values):
            lines.append(f"    {'* -' if i == 0 else '  -'} {v}".rstrip())
    return [*lines, ""]


def document_rst(doc: Document, fragment: bool = False) -> str:
    """A page (title, versioned header, tables, notes), or with ``fragment`` the tables and
    notes alone, for ``.. include::`` in a page of the docs (sections become rubrics, so the
    including page's heading levels are left alone)."""
    t = doc.table
    bar = "*" * max(80, _columns(_text(t.title)))
    lines = []
    if not fragment:
        lines = [
            bar,
            _text(t.title),
            bar,
            "",
            f":Matrix version: {_literal(doc.header.version)}",
            f":Last verified: {_text(doc.header.last_verified)}",
            ":Source of truth:",
            "",
            *([f"    - {_text(s)}" for s in doc.header.source] or ["    -"]),
            "",
        ]
    heads = (*shown_label_headers(t), *t.columns)
    for title, rows in sections(t):
        if title:
            lines += [f".. rubric:: {_text(title)}", ""]
        values = [
            [
                _literal(x) if i < t.literal_labels else _text(x)
                for i, x in enumerate(shown_labels(t, row))
            ]
            + [_text(c.text) for c in row.cells]
            for row in rows
        ]
        lines += _list_table("" if title else t.title, heads, values)
    for note in t.notes:
        lines += [_text(note), ""]
    return "\n".join(lines)
