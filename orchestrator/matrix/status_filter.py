"""``matrix render --status fail,crash``: only the rows where some cell's evidence has one
of these statuses (its verdict, or any attempt's status), every column kept."""

from __future__ import annotations

from dataclasses import replace

from .document import Document, TCell


def _shows(cell: TCell, wanted: frozenset[str]) -> bool:
    return cell.verdict in wanted or any(s in wanted for s in cell.statuses)


def rows_with(doc: Document, statuses: tuple[str, ...]) -> Document:
    """``doc`` with only the rows having a cell in one of ``statuses``; all of it when none given."""
    if not statuses:
        return doc
    wanted = frozenset(statuses)
    rows = tuple(r for r in doc.table.rows if any(_shows(c, wanted) for c in r.cells))
    params = {**doc.params, "status": list(statuses)}
    table = replace(doc.table, rows=rows)
    if not rows:  # a filter that matched nothing says so in every format, not an empty table
        said = (
            f"No row has a cell in {', '.join(statuses)} "
            f"(without --status the matrix has {len(doc.table.rows)} rows)."
        )
        table = replace(table, notes=(said, *table.notes))
    return Document(doc.header, table, params)
