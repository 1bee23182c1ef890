"""Reads for the static site (ext/site/service.py): every run, check, result and
inventory in a few set-based SELECTs (a 300,000-result store is read in seconds:
bench/bench_site.py). Takes the caller's session; plain dicts and tuples out. On SQLite the
results come from the driver's own cursor in id order: no Row per result, no sort of every
row (docs/benchmarks.md, "Static site build")."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from typing import Any

from sqlalchemy import LargeBinary, Text, select, type_coerce
from sqlalchemy.orm import Session

from . import tables
from .damaged import driver_errors
from .models import Host, Image, Result, Run, TaskRow

#: (result id, run id, check pk, attempt, status, duration_s, message, metrics as stored (JSON
#: text, or a dict where the driver parses JSON), samples as stored (packed bytes), suite,
#: library)
ResultLine = tuple[
    int,
    str,
    int,
    int,
    str,
    float,
    str,
    str | dict[str, Any] | None,
    bytes | None,
    str | None,
    str | None,
]


def runs(session: Session) -> list[dict[str, Any]]:
    """Every run with its image and host, oldest first."""
    q = (
        select(
            *(c for c in tables.run.c if c.name not in ("image_id", "host_id", "pruned")),
            *(c for c in tables.image.c if c.name != "id"),
            Host.name.label("host"),
            Host.spec.label("host_spec"),
        )
        .join(Image, Image.id == Run.image_id)
        .join(Host, Host.id == Run.host_id)
        .order_by(Run.started, Run.id)
    )
    return [dict(r._mapping) for r in session.execute(q)]


def tasks(session: Session) -> list[tuple[str, str, dict[str, Any], dict[str, Any]]]:
    """Every finished task: (run id, suite, suite spec, timings), for the suites' budgets."""
    q = select(TaskRow.run_id, TaskRow.suite, TaskRow.suite_spec, TaskRow.timings).where(
        TaskRow.state == "done"
    )
    return [(r, s, spec or {}, t or {}) for r, s, spec, t in session.execute(q)]


def checks(session: Session) -> dict[int, dict[str, Any]]:
    return {r.id: dict(r._mapping) for r in session.execute(select(tables.check))}


def results(session: Session) -> Iterator[ResultLine]:
    """Every result (``ResultLine``), by id: each run's in the order they were written (by run
    then id would make the database sort them all: a third of the read). Streamed: the caller
    keeps what it needs. Samples and metrics come back raw: decoding 300,000 of them through
    the column types is most of a large site's read."""
    q = (
        select(
            Result.id,
            Result.run_id,
            Result.check_pk,
            Result.attempt,
            Result.status,
            Result.duration_s,
            Result.message,
            type_coerce(Result.metrics, Text),
            type_coerce(Result.samples, LargeBinary),
            TaskRow.suite,
            Result.library,
        )
        .outerjoin(TaskRow, TaskRow.id == Result.task_id)
        .order_by(Result.id)
    )
    conn = session.connection()
    if conn.dialect.name == "sqlite":
        # the driver's own cursor on the session's connection: plain tuples, without a Row
        # made per result (a third of the read of a 300,000-result store; the statement has
        # no parameters)
        cursor = conn.connection.cursor()
        try:
            with driver_errors(conn):  # a damaged page is "damaged store", not a traceback
                cursor.execute(str(q.compile(dialect=conn.dialect)))
                while batch := cursor.fetchmany(20_000):
                    yield from batch
        finally:
            # closed late when the reader stopped early (a damaged value, Ctrl-C) and the
            # session closed first: a cursor of a closed connection has nothing to release
            with contextlib.suppress(conn.dialect.loaded_dbapi.Error):
                cursor.close()
        return
    # elsewhere Core rows, streamed (without the ORM's per-row loading)
    yield from conn.execute(q.execution_options(yield_per=20_000))


def inventories(session: Session) -> dict[str, dict[str, tuple[str, str]]]:
    """run id → component → (value, source)."""
    out: dict[str, dict[str, tuple[str, str]]] = {}
    inv = tables.inventory.c
    q = select(inv.run_id, inv.component, inv.value, inv.source)
    for run_id, comp, value, source in session.execute(q):
        out.setdefault(run_id, {})[comp] = (value, source)
    return out


def passing_samples_source(session: Session) -> tuple[str, str] | None:
    """Where another process may read (result id, samples as stored) of every passing result, by id
    (store/sample_reader.py, for ext/site/summaries.py): the SQLite file and the statement, compiled
    from this Core query; None for any other store (a server, a database in memory)."""
    conn = session.connection()
    database = conn.engine.url.database
    if conn.dialect.name != "sqlite" or not database or database == ":memory:":
        return None
    if database.startswith("file:") or not os.path.isfile(database):
        return None
    q = (
        select(Result.id, type_coerce(Result.samples, LargeBinary))
        .where(Result.status == "pass", Result.samples.is_not(None))
        .order_by(Result.id)
    )
    sql = str(q.compile(dialect=conn.dialect, compile_kwargs={"literal_binds": True}))
    return os.path.abspath(database), sql
