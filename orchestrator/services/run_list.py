"""``valorch results list``: the newest runs, each with its final counts by status.

A local SQLite file at this valorch's schema is read through ``store.lite`` (the
standard library's sqlite3; no SQLAlchemy import, issue 9's start-up goal); every
other store, and any file the fast path declines, through SQLAlchemy. Both give the
same raw rows, and the counts are made here from them in one way."""

from __future__ import annotations

import sqlite3
from typing import Any, Iterable

from ..matrix.model import final_counts
from ..store import lite


def listing(db: str | None, limit: int, image: str | None) -> list[dict[str, Any]]:
    """Runs, newest first, each with its final counts by status (``counts``, a Counter)."""
    conn = lite.connect(db)
    if conn is not None:
        try:
            runs = lite.list_runs(conn, limit, image)
            return _rows(runs, lite.run_statuses(conn, [r[0] for r in runs]))
        except sqlite3.Error:
            pass  # the SQLAlchemy path below says what is wrong with the file
        finally:
            conn.close()
    from ..store import queries
    from .session import sessions

    with sessions(db)() as session:
        runs = [(r.id, r.started, r.job, r.state, r.image.alias, r.image.digest, r.host.name)
                for r in queries.list_runs(session, limit, image)]
        return _rows(runs, queries.run_statuses(session, [r[0] for r in runs]))


def _rows(runs: list[tuple], statuses: Iterable[tuple[str, str, int, str]]) -> list[dict[str, Any]]:
    attempts: dict[str, list[tuple[str, int, str]]] = {}
    for run_id, check_id, attempt, status in statuses:
        attempts.setdefault(run_id, []).append((check_id, attempt, status))
    return [{"run": rid, "image": alias, "digest": digest, "host": host, "job": job, "state": state,
             "started": started, "counts": final_counts(attempts.get(rid, ()))}
            for rid, started, job, state, alias, digest, host in runs]
