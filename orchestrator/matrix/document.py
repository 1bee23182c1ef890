"""A rendered-to-be matrix document: a versioned header and one table whose cells
keep their verdicts and the runs behind them. Every layout produces one; every
renderer reads one; a published version stores one and gives it back unchanged."""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from typing import Any

from ..statuses import LEGEND


@dataclass(frozen=True)
class TCell:
    text: str
    verdict: str = ""
    statuses: tuple[str, ...] = ()
    runs: tuple[str, ...] = ()
    note: str = ""  # e.g. "catalog says 2.4.0, image has 2.5.1"
    # YYYY-MM-DD of the evidence behind the cell ("" where the cell is not a measurement)
    when: str = ""
    # stale, previous-digest, cpu-only, newer-inconclusive (matrix.evidence)
    flags: tuple[str, ...] = ()


@dataclass(frozen=True)
class TRow:
    key: str
    labels: tuple[str, ...]
    cells: tuple[TCell, ...]


@dataclass(frozen=True)
class Table:
    layout: str
    title: str
    label_headers: tuple[str, ...]
    columns: tuple[str, ...]
    rows: tuple[TRow, ...]
    notes: tuple[str, ...] = (LEGEND,)
    literal_labels: int = 0  # the first N label columns are code (check ids): ``x`` / `x`


@dataclass(frozen=True)
class Header:
    version: str  # "unpublished" for a working render
    last_verified: str  # YYYY-MM-DD of the newest run end
    source: tuple[str, ...] = ()
    stale: int = 0  # cells whose evidence is older than the freshness window
    fresh_days: int = 7


@dataclass(frozen=True)
class Document:
    header: Header
    table: Table
    params: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        h, t = self.header, self.table
        return {
            "matrix_version": h.version,
            "last_verified": h.last_verified,
            "source_of_truth": list(h.source),
            "params": self.params,
            "stale_cells": h.stale,
            "fresh_days": h.fresh_days,
            **{k: v for k, v in _plain(t).items() if k != "rows"},
            "rows": [
                {
                    "key": r.key,
                    "labels": list(r.labels),
                    "cells": {col: _plain(c) for col, c in zip(t.columns, r.cells, strict=False)},
                }
                for r in t.rows
            ],
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Document:
        rows = tuple(
            TRow(
                r["key"], tuple(r["labels"]), tuple(_of(TCell, r["cells"][c]) for c in d["columns"])
            )
            for r in d["rows"]
        )
        header = Header(
            d["matrix_version"],
            d["last_verified"],
            tuple(d["source_of_truth"]),
            d.get("stale_cells", 0),
            d.get("fresh_days", 7),
        )
        return cls(header, _of(Table, d, rows=rows), d.get("params", {}))

    def with_header(self, header: Header) -> Document:
        return Document(header, self.table, self.params)


def _plain(obj: Any) -> dict[str, Any]:
    """A dataclass's stored form: its fields in order (as ``__init__`` sets them), tuples as
    lists."""
    return {k: list(v) if isinstance(v, tuple) else v for k, v in vars(obj).items()}


# fields added after the first published versions: an older stored form lacks them
_LATER = frozenset({"when", "flags", "literal_labels"})


def _of(cls: Any, d: dict[str, Any], **given: Any) -> Any:
    """``cls`` from its stored form: lists back to tuples; only a field added later may be
    missing (it takes its default), any other missing key is a KeyError as before."""
    kw = {f.name: d[f.name] for f in fields(cls) if f.name not in given and f.name not in _LATER}
    kw |= {k: d[k] for k in _LATER & d.keys() if k not in given}
    return cls(**{k: tuple(v) if isinstance(v, list) else v for k, v in kw.items()}, **given)


def freshness(stale: int, cells: int, days: int) -> str:
    """The header's freshness line: how many dated cells are older than the window; a layout
    whose cells carry no date (components, libraries: inventories) says so, not "0 of 0"."""
    if not cells:
        return "freshness: the cells of this layout carry no date (the checks layout dates each)"
    return f"freshness: {stale} of {cells} dated cell{'s' if cells != 1 else ''} older than {days} days"


def rows_with(doc: Document, statuses: tuple[str, ...]) -> Document:
    """``matrix render --status fail,crash``: ``doc`` with only the rows where some cell's
    evidence has one of ``statuses`` (its verdict, or any attempt's status), every column
    kept; all of it when none given."""
    if not statuses:
        return doc
    wanted = frozenset(statuses)
    rows = tuple(
        r
        for r in doc.table.rows
        if any(c.verdict in wanted or wanted.intersection(c.statuses) for c in r.cells)
    )
    params = {**doc.params, "status": list(statuses)}
    table = replace(doc.table, rows=rows)
    if not rows:  # a filter that matched nothing says so in every format, not an empty table
        said = (
            f"No row has a cell in {', '.join(statuses)} "
            f"(without --status the matrix has {len(doc.table.rows)} rows)."
        )
        table = replace(table, notes=(said, *table.notes))
    return Document(doc.header, table, params)
