"""reStructuredText: a ``list-table`` shaped like rocm-pytorch-compatibility.rst."""

from __future__ import annotations

import re

from typing import TYPE_CHECKING

from .. import encode

if TYPE_CHECKING:
    from ..matrix.document import Document

_SPECIAL = re.compile(r"([\\`*_|\[\]<>:])")


def _text(value: str) -> str:
    """Inline text with RST markup characters escaped, on one line."""
    return encode.rst(value)


def _literal(value: str) -> str:
    return f"``{' '.join(encode.one_line(value).split())}``" if value and "``" not in value else _text(value)


def document_rst(doc: Document) -> str:
    t = doc.table
    bar = "*" * max(80, len(_text(t.title)))  # an over/underline shorter than its title is an RST error
    lines = [bar, _text(t.title), bar, "", f":Matrix version: {_literal(doc.header.version)}",
             f":Last verified: {_text(doc.header.last_verified)}", ":Source of truth:"]
    lines += [f"    - {_text(s)}" for s in doc.header.source] or ["    -"]
    lines += ["", f".. list-table:: {_text(t.title)}", "    :header-rows: 1", ""]
    first = True
    for h in doc.headers:
        lines.append(f"    {'* -' if first else '  -'} {_text(h)}".rstrip())
        first = False
    for row in t.rows:
        lines.append("")
        values = [_literal(x) if i < t.literal_labels else _text(x) for i, x in enumerate(row.labels)]
        values += [_text(c.text) for c in row.cells]
        for i, v in enumerate(values):
            lines.append(f"    {'* -' if i == 0 else '  -'} {v}".rstrip())
    lines.append("")
    for note in t.notes:
        lines += [_text(note), ""]
    return "\n".join(lines)
