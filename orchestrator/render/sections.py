"""Tables cut into sections, as the seed pages are (torch dtypes, torch.cuda, ...): a table
whose first label header is SECTION carries each row's section in that label; renderers
print one heading and one table per section, without the section column (pure)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..matrix.document import Table, TRow

SECTION = "Section"


def sectioned(table: Table) -> bool:
    return table.label_headers[:1] == (SECTION,)


def sections(table: Table) -> list[tuple[str, list[TRow]]]:
    """[(section title, its rows)] in table order; one untitled section for a plain table."""
    if not sectioned(table):
        return [("", list(table.rows))]
    out: dict[str, list[TRow]] = {}
    for row in table.rows:
        out.setdefault(row.labels[0], []).append(row)
    return list(out.items())


def shown_labels(table: Table, row: TRow) -> tuple[str, ...]:
    return row.labels[1:] if sectioned(table) else row.labels


def shown_label_headers(table: Table) -> tuple[str, ...]:
    return table.label_headers[1:] if sectioned(table) else table.label_headers
