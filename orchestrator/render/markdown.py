"""GitHub-flavoured Markdown."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from .. import encode
from ..statuses import LEGEND
from .sections import sections, shown_label_headers, shown_labels

if TYPE_CHECKING:
    from ..matrix.document import Document
    from ..matrix.model import Cell, Matrix


_cell = encode.markdown


def matrix_md(
    matrix: Matrix,
    title: str = "Compatibility matrix",
    text: Callable[[Cell], str] = lambda c: c.text,
) -> str:
    """``matrix`` as a Markdown table; ``text`` writes a cell (``services/evidence.marked``
    adds what its flags say)."""
    head = ["Check", "Feature", "Library", *matrix.columns]
    lines = [
        f"## {title}",
        "",
        "| " + " | ".join(_cell(h) for h in head) + " |",
        "|" + "|".join("---" for _ in head) + "|",
    ]
    for row in matrix.rows:
        cells = [row.feature, row.library or ""]
        cells += [text(matrix.cell(row.key, col)) for col in matrix.columns]
        lines.append(
            "| " + " | ".join([encode.markdown_code(row.key), *(_cell(c) for c in cells)]) + " |"
        )
    lines += ["", f"Legend: {LEGEND}", ""]
    return "\n".join(lines)


def document_md(doc: Document, fragment: bool = False) -> str:
    """The versioned header (matrix version, last verified, source of truth), then the table
    (one per section, under a heading, where the table has sections). A fragment is the
    table(s) and notes alone, to include in a hand-written page."""
    t = doc.table
    lines = []
    if not fragment:
        lines = [
            f"# {_cell(t.title)}",
            "",
            f"- Matrix version: {encode.markdown_code(doc.header.version)}",
            f"- Last verified: {encode.markdown_code(doc.header.last_verified)}",
            "- Source of truth:",
            *(f"  - {_cell(s)}" for s in doc.header.source),
            "",
        ]
    heads = (*shown_label_headers(t), *t.columns)
    literal = t.literal_labels
    for title, rows in sections(t):
        if title:
            lines += [f"{'###' if fragment else '##'} {_cell(title)}", ""]
        lines += [
            "| " + " | ".join(_cell(h) for h in heads) + " |",
            "| " + " | ".join("---" for _ in heads) + " |",
        ]
        for row in rows:
            labels = [
                encode.markdown_code(x) if i < literal and x else _cell(x)
                for i, x in enumerate(shown_labels(t, row))
            ]
            lines.append("| " + " | ".join([*labels, *(_cell(c.text) for c in row.cells)]) + " |")
        lines.append("")
    lines += [f"{_cell(n)}\n" for n in t.notes]
    return "\n".join(lines)
