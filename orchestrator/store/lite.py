"""The read-only fast paths of ``valorch results list`` and of a run's start: the
standard library's sqlite3 on a local SQLite file that is already at this valorch's
schema.

Importing SQLAlchemy and mapping the models costs as much as a listing's whole
start-up should (docs/benchmarks.md). A listing reads three small joins, so for the
common case (a local file at HEAD) it reads them here with plain SQL, and returns the
same rows as ``store.queries.list_runs`` / ``run_statuses`` (tests/unit/test_store_lite.py
compares both on the same files). ``valorch run`` reads the plan's history here
(``suite_durations``, as ``store.queries.suite_durations``), so that a batch's first
containers start before SQLAlchemy is loaded (services/run). Anything else returns
None and the caller takes the SQLAlchemy path, which also owns every error message:
a missing file, a server URL, a schema to migrate, a migration in progress, a
damaged file.

Nothing here writes.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from urllib.parse import quote

from .damaged import damaged_value, schema_problems
from .location import DEFAULT_PATH, migrate_lock
from .revision import HEAD

RUNS = (
    "SELECT run.id, run.started, run.job, run.state, image.alias, image.digest, host.name "
    "FROM run JOIN image ON image.id = run.image_id JOIN host ON host.id = run.host_id"
)
#: a row of RUNS: (id, started, job, state, image alias, image digest, host name)
RunLine = tuple[str, datetime, str, str, str, str | None, str]
STATUSES = (
    'SELECT result.run_id, "check".check_id, result.attempt, result.status FROM result '
    'JOIN "check" ON "check".id = result.check_pk WHERE result.run_id IN ({marks}) '
    'ORDER BY result.run_id, "check".check_id, result.attempt, result.id'
)


def local_path(db: str | None) -> Path | None:
    """The file a ``--db`` value names when it is a plain SQLite file (a path, or a
    ``sqlite:///`` URL without options); None for anything else."""
    if not db:
        return Path.cwd() / DEFAULT_PATH
    if "://" not in db:
        return Path(db)
    if db.startswith("sqlite:///") and "?" not in db and len(db) > len("sqlite:///"):
        return Path(db[len("sqlite:///") :])
    return None


def connect(db: str | None) -> sqlite3.Connection | None:
    """A connection to ``db`` when the fast path may read it, else None."""
    path = local_path(db)
    if path is None or not path.is_file() or migrate_lock(path).exists():
        return None
    try:
        conn = sqlite3.connect(f"file:{quote(os.path.abspath(path))}?mode=rw", uri=True, timeout=60)
    except sqlite3.Error:
        return None
    try:
        row = conn.execute("SELECT version_num FROM alembic_version").fetchone()
    except sqlite3.Error:
        row = None
    if (
        row is None or row[0] != HEAD or _schema_problems(conn)
    ):  # the SQLAlchemy path names the damage
        conn.close()
        return None
    return conn


def _schema_problems(conn: sqlite3.Connection) -> list[str]:
    found = {
        t: {c[1] for c in conn.execute(f'PRAGMA table_info("{t}")')}
        for (t,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
    }
    return schema_problems(found)


def _started(value: str) -> datetime:
    try:
        return datetime.fromisoformat(value)
    except (TypeError, ValueError) as exc:
        raise damaged_value("run.started", value, exc, "a date/time") from None


def list_runs(
    conn: sqlite3.Connection,
    limit: int,
    image: str | None,
    *,
    job: str | None = None,
    states: tuple[str, ...] = (),
    since: datetime | None = None,
) -> list[RunLine]:
    """(id, started, job, state, image alias, image digest, host name) of the newest runs: of
    ``image`` (alias or reference), ``job``, in one of ``states``, started at or after ``since``
    (UTC), as queries.list_runs selects them."""
    where, args = [], []
    if image:
        where.append("(image.alias = ? OR image.reference = ?)")
        args += [image, image]
    if job:
        where.append("run.job = ?")
        args.append(job)
    if states:
        where.append(f"run.state IN ({', '.join('?' * len(states))})")
        args += list(states)
    if since is not None:
        where.append("run.started >= ?")
        args.append(since.strftime("%Y-%m-%d %H:%M:%S.%f"))
    sql = RUNS + (" WHERE " + " AND ".join(where) if where else "")
    sql += " ORDER BY run.started DESC, run.id DESC LIMIT ?"
    rows = conn.execute(sql, [*args, limit]).fetchall()
    return [
        (rid, _started(started), job_, state, alias, digest, host)
        for rid, started, job_, state, alias, digest, host in rows
    ]


def run_statuses(
    conn: sqlite3.Connection, run_ids: list[str]
) -> Iterator[tuple[str, str, int, str]]:
    """(run id, check id, attempt, status) of every result of these runs, attempts in order."""
    for i in range(0, len(run_ids), 500):
        chunk = run_ids[i : i + 500]
        yield from conn.execute(STATUSES.format(marks=", ".join("?" * len(chunk))), chunk)


DURATIONS = (
    "SELECT image.alias, task.suite, task.timings FROM task JOIN run ON task.run_id = run.id "
    "JOIN image ON run.image_id = image.id WHERE task.state = ? ORDER BY task.id DESC LIMIT ?"
)


def suite_durations(conn: sqlite3.Connection, limit: int = 500) -> dict[tuple[str, str], float]:
    """The last measured duration of each (image alias, suite), for placement and ETAs."""
    out: dict[tuple[str, str], float] = {}
    for alias, suite, timings in conn.execute(DURATIONS, ("done", limit)):
        try:
            total = (json.loads(timings) or {}).get("total_s") if timings else None
        except (ValueError, AttributeError) as exc:
            raise damaged_value("task.timings", timings, exc, "JSON") from None
        if total and (alias, suite) not in out:
            out[(alias, suite)] = float(total)
    return out
