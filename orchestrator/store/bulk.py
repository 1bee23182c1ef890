"""Bulk reads and writes for the regression diff, baselines and the scale benchmark.

SQLAlchemy Core statements (no ORM identity map) where the row counts are large:
one executemany per table for ingest, one joined SELECT for a diff side.
Every function takes the session it works in; committing is the caller's business.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from sqlalchemy import JSON, Column, DateTime, Row, Table, insert, select, text, update
from sqlalchemy.orm import Session
from sqlalchemy.types import TypeEngine

from . import tables
from .coltypes import Samples, pack_samples
from .damaged import driver_errors
from .models import Base, Check, Host, Image, Result, Run
from .queries import chunks, now

CHUNK = 20_000
BASELINE = tables.baseline


def _json(value: Any) -> str:
    if not value and isinstance(value, dict):
        return "{}"
    return json.dumps(value)


def stored_type(column: Column[Any]) -> TypeEngine[Any]:
    """A column's type under coltypes.Checked (which only adds the damaged-value error)."""
    inner: TypeEngine[Any] = getattr(column.type, "inner", column.type)
    return inner


def _encoder(columns: Sequence[Column[Any]]) -> Callable[[dict[str, Any]], tuple[Any, ...]]:
    """dict row -> tuple of driver values, as one compiled expression: a generic loop over
    columns costs more than SQLite's own work for a narrow row (bench/bench_scale.py).
    The expression is built from the model's column names only."""
    parts = []
    for c in columns:
        key = repr(c.name)
        if isinstance(stored_type(c), Samples):
            parts.append(f"pack(r[{key}])")
        elif isinstance(stored_type(c), JSON):
            parts.append(f"dumps(r[{key}])")
        else:
            parts.append(f"r[{key}]")
    encode: Callable[[dict[str, Any]], tuple[Any, ...]] = eval(  # noqa: S307 (the source is built here from column indices, no outside text)
        f"lambda r: ({', '.join(parts)},)", {"pack": pack_samples, "dumps": _json}
    )
    return encode


def insert_rows(session: Session, model: type[Base] | Table, rows: Sequence[dict[str, Any]]) -> int:
    """INSERT many rows of one table (dicts keyed by column name, every row the same keys).

    PostgreSQL: COPY FROM STDIN through psycopg. SQLite: the driver's executemany with the
    values encoded here (SQLAlchemy's per-row bind processing is most of the cost of a
    large ingest). Tables with SQLite date columns, and rows that leave a column with a
    default out, go through SQLAlchemy's executemany (insertmanyvalues)."""
    table = model if isinstance(model, Table) else model.__table__
    if not rows:
        return 0
    given = set(rows[0])
    dialect = session.get_bind().dialect.name
    cols = [c for c in table.columns if c.name in given]
    core = any(c.name not in given and c.default is not None for c in table.columns) or (
        dialect == "sqlite" and any(isinstance(stored_type(c), DateTime) for c in cols)
    )
    if core:
        for chunk in chunks(rows, CHUNK):
            session.execute(insert(table), list(chunk))
    else:
        _driver_insert(session, table.name, cols, rows)
    serial = table.autoincrement_column
    if dialect == "postgresql" and serial is not None and serial.name in given:
        # explicit ids do not move the id sequence: the next ordinary INSERT would collide
        session.execute(
            text(
                f"SELECT setval(pg_get_serial_sequence('\"{table.name}\"', '{serial.name}'), "
                f'(SELECT max("{serial.name}") FROM "{table.name}"))'
            )
        )
    return len(rows)


def _driver_insert(
    session: Session, name: str, cols: Sequence[Column[Any]], rows: Sequence[dict[str, Any]]
) -> None:
    """The rows through the driver's own cursor: COPY on PostgreSQL, executemany on SQLite."""
    names = ", ".join(f'"{c.name}"' for c in cols)
    encode = _encoder(cols)
    conn = session.connection()
    # the driver's connection (psycopg's untyped here), in the session's transaction
    raw: Any = conn.connection.driver_connection
    # a full disk or a damaged file named, as through SQLAlchemy
    with driver_errors(conn), contextlib.closing(raw.cursor()) as cur:
        if conn.dialect.name == "postgresql":
            with cur.copy(f'COPY "{name}" ({names}) FROM STDIN') as copy:
                for r in rows:
                    copy.write_row(encode(r))
            return
        sql = f'INSERT INTO "{name}" ({names}) VALUES ({", ".join("?" for _ in cols)})'
        for chunk in chunks(rows, CHUNK):
            cur.executemany(sql, [encode(r) for r in chunk])


# --- reads for diff sides -------------------------------------------------------------------------------


def runs_of_batch(session: Session, batch: str) -> list[Run]:
    q = (
        select(Run).where(Run.batch == batch)
        if len(batch) == 36
        else select(Run).where(Run.batch.like(f"{batch}%"))
    )
    runs = list(session.scalars(q.order_by(Run.started)).unique())
    if len({r.batch for r in runs}) > 1:
        return []  # an ambiguous prefix names nothing
    return runs


class Published(NamedTuple):
    """A published matrix version: its layout (matrix_version.meta) and its matrix_cell rows."""

    version: str
    meta: dict[str, Any]
    cells: list[Row[Any]]


def matrix_version(session: Session, version: str) -> Published | None:
    mv, cell = tables.matrix_version.c, tables.matrix_cell.c
    found = session.execute(select(mv.id, mv.meta).where(mv.version == version)).first()
    if found is None:
        return None
    q = select(tables.matrix_cell).where(cell.matrix_id == found.id).order_by(cell.id)
    return Published(version, found.meta, list(session.execute(q)))


def baseline(session: Session, name: str) -> Row[Any] | None:
    """The baseline named ``name`` (its run_id or matrix_version), or None."""
    return session.execute(select(BASELINE).where(BASELINE.c.name == name)).first()


def set_baseline(
    session: Session, name: str, run_id: str | None = None, version: str | None = None
) -> None:
    values = {"run_id": run_id, "matrix_version": version, "created": now()}
    if baseline(session, name) is None:
        session.execute(insert(BASELINE).values(name=name, **values))
    else:
        session.execute(update(BASELINE).where(BASELINE.c.name == name).values(**values))


def result_rows(session: Session, run_ids: Sequence[str]) -> list[dict[str, Any]]:
    """Every attempt of the given runs, joined with its check and image, as plain dicts."""
    q = (
        select(
            Run.id.label("run_id"),
            Image.alias,
            Image.backend,
            *(tables.check.c[n] for n in ("check_id", "version", "bigger_is_better")),
            *(tables.result.c[n] for n in ("status", "attempt", "samples", "metrics", "message")),
            Result.definition,
        )
        .join(Result, Result.run_id == Run.id)
        .join(Check, Check.id == Result.check_pk)
        .join(Image, Image.id == Run.image_id)
        .where(Run.id.in_(list(run_ids)))
        .order_by(Result.id)
    )
    return [dict(r._mapping) for r in session.execute(q)]


def host_names(session: Session, run_ids: Sequence[str]) -> list[str]:
    q = (
        select(Host.name)
        .join(Run, Run.host_id == Host.id)
        .where(Run.id.in_(list(run_ids)))
        .distinct()
    )
    return sorted(session.scalars(q))
