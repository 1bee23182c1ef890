"""``valorch db check``: every problem of a store, found without changing it.

- the database's own integrity check (SQLite ``PRAGMA integrity_check``; a server
  checks its pages itself);
- the schema against this valorch's tables (store/tables.py): the revision, every table and column;
- every stored value of a typed column (dates, JSON, timing samples) read back as the
  commands read it, naming the row of each that does not parse;
- every JSON blob (a run's meta, a task's suite and timings, a host's spec, a result's
  metrics) checked against the model its readers read it as (store/blobs.py), naming the
  row, the column and the place inside.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from itertools import islice
from typing import Any

from sqlalchemy import Column, Table, text
from sqlalchemy.engine import Engine
from sqlalchemy.exc import DBAPIError

from ..errors import InfrastructureError
from . import damaged, full
from .coltypes import Checked
from .db import current_revision, tables
from .revision import HEAD
from .tables import metadata

MAX_PER_COLUMN = 20  # rows named per damaged column; the count says the rest


def diagnose(engine: Engine) -> list[str]:
    problems: list[str] = []
    sqlite = engine.url.get_backend_name() == "sqlite"
    try:
        if sqlite:
            with engine.connect() as conn:
                rows = [r[0] for r in conn.execute(text("PRAGMA integrity_check"))]
            problems += [f"integrity: {r}" for r in rows if r != "ok"]
        rev = current_revision(engine)
        if rev != HEAD:
            problems.append(
                f"schema revision is {rev or 'missing'}, this valorch needs {HEAD} "
                "(valorch db upgrade migrates a store that is behind)"
            )
        found = tables(engine)
    except full.StorageFull:
        raise  # a full disk is no damage: exit 3 naming it, not "restore from a backup"
    except (DBAPIError, InfrastructureError) as exc:  # a file damaged below the page level
        return [*problems, f"unreadable: {str(getattr(exc, 'orig', exc)).splitlines()[0]}"]
    problems += damaged.schema_problems(found, metadata)
    if {"run", "task"} <= set(found):
        problems += _bad_times(engine)
    problems += _bad_blobs(engine, found)
    for table in metadata.sorted_tables:
        key = table.primary_key.columns.values()[0]
        for column in table.columns:
            if (
                not isinstance(column.type, Checked)
                or column.name not in found.get(table.name, ())
                or key.name not in found.get(table.name, ())
            ):
                continue
            problems += _bad_values(engine, table, key, column)
    return problems


def _bad_times(engine: Engine) -> list[str]:
    """Runs and tasks dated before valorch's epoch, in the future, or ending before they
    started (an import before times were checked): each would sort as the newest or oldest
    evidence of its cells. Read raw: a value that is no time at all is _bad_values' row."""
    from datetime import datetime, timedelta, timezone

    from ..bounds import EPOCH_ISO, FUTURE_SKEW_S

    epoch = datetime.fromisoformat(EPOCH_ISO)
    latest = datetime.now(timezone.utc).replace(tzinfo=None) + timedelta(seconds=FUTURE_SKEW_S)

    def when(value: Any) -> datetime | None:
        if isinstance(value, datetime):
            return value.replace(tzinfo=None)
        try:
            return datetime.fromisoformat(str(value)) if value else None
        except ValueError:
            return None

    def lines(conn: Any, table: str) -> Iterator[str]:
        for row_id, raw_start, raw_end in conn.execute(
            text(f'SELECT id, started, ended FROM "{table}"')
        ):
            started, ended = when(raw_start), when(raw_end)
            times = [t for t in (started, ended) if t is not None]
            if not any(t < epoch or t > latest for t in times) and not (
                started and ended and ended < started
            ):
                continue
            yield (
                f"{table} row id={row_id!r}: started {raw_start}, ended {raw_end}: not "
                f"a time a run can have (after {EPOCH_ISO[:10]}, not in the future, "
                "ending after it started)"
            )

    with engine.connect() as conn:
        return [line for table in ("run", "task") for line in _first(lines(conn, table), table)]


def _bad_values(engine: Engine, table: Table, key: Column[Any], column: Column[Any]) -> list[str]:
    """Rows of ``column`` whose stored value does not read back as its type."""
    process = column.type.result_processor(engine.dialect, None)
    if process is None:
        return []
    stmt = text(
        f'SELECT "{key.name}", "{column.name}" FROM "{table.name}" WHERE "{column.name}" IS NOT NULL'
    )

    def lines(conn: Any) -> Iterator[str]:
        for row_id, value in conn.execute(stmt):
            try:
                process(value)
            except InfrastructureError as exc:
                why = exc.message.removeprefix("damaged store: ")
                yield f"{table.name} row {key.name}={row_id!r}: {why}"

    with engine.connect() as conn:
        return _first(lines(conn), f"{table.name}.{column.name}")


def _bad_blobs(engine: Engine, found: dict[str, Any]) -> list[str]:
    """Rows whose JSON blob reads back as JSON but not as the shape its readers expect
    (an import before blobs were checked, a hand edit): named here rather than as a
    traceback in ``site build`` or ``run --resume``."""
    from . import blobs

    columns = (
        ("run", "meta", blobs.run_meta),
        ("task", "suite_spec", blobs.suite_spec),
        ("task", "timings", blobs.timings),
        ("host", "spec", blobs.host_spec),
        ("result", "metrics", blobs.metrics),
    )
    bad: list[str] = []
    for table_name, column_name, check in columns:
        table = metadata.tables[table_name]
        key = table.primary_key.columns.values()[0]
        if not {key.name, column_name} <= set(found.get(table_name, ())):
            continue
        process = table.c[column_name].type.result_processor(engine.dialect, None)
        stmt = text(f'SELECT "{key.name}", "{column_name}" FROM "{table_name}"')
        with engine.connect() as conn:
            bad += _first(
                _blob_lines(
                    conn.execute(stmt), process, check, column_name, f"{table_name} row {key.name}"
                ),
                f"{table_name}.{column_name}",
            )
    return bad


def _blob_lines(rows: Any, process: Any, check: Any, column: str, where: str) -> Iterator[str]:
    """The lines of one blob column's rows that read as JSON but not as their shape."""
    for row_id, raw in rows:
        try:
            value = process(raw) if process is not None else raw
        except InfrastructureError:
            continue  # not JSON at all: _bad_values names it
        found_here = check({} if value is None else value, column)
        if found_here:
            yield f"{where}={row_id!r}: {'; '.join(found_here)}"


def _first(lines: Iterable[str], what: str) -> list[str]:
    """The first MAX_PER_COLUMN of ``lines``, then how many more there were: the rest are
    counted as they stream by, never held (a store may hold millions of damaged rows)."""
    rest = iter(lines)
    kept = list(islice(rest, MAX_PER_COLUMN))
    more = sum(1 for _ in rest)
    return kept + [f"{what}: and {more} more row(s) like these"] * (more > 0)
