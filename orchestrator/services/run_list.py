"""``valorch results list``: the newest runs, each with its final counts by status, read
through the store's queries (``store.queries.list_runs`` / ``run_statuses``, Core selects on
a connection: no ORM), whatever the store: a SQLite file or a server."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from ..errors import InputError
from ..matrix.model import final_counts

#: a run's states (store.tables.run's state), what ``results list --state`` accepts
RUN_STATES = ("running", "done", "failed", "interrupted")

#: a listed run: (id, started, job, state, image alias, image digest, host name)
RunLine = tuple[str, datetime, str, str, str, str | None, str]


def states_of(value: str | None) -> tuple[str, ...]:
    """``--state done,interrupted`` as a tuple; an unknown state is bad input (exit 2)."""
    states = tuple(s.strip() for s in (value or "").split(",") if s.strip())
    unknown = [s for s in states if s not in RUN_STATES]
    if unknown:
        raise InputError(
            f"--state {', '.join(unknown)}: not a run state",
            f"use one or more of {', '.join(RUN_STATES)}, comma-separated",
        )
    return states


def listing(
    db: str | None,
    limit: int,
    image: str | None,
    *,
    job: str | None = None,
    states: tuple[str, ...] = (),
    since: datetime | None = None,
) -> list[dict[str, Any]]:
    """Runs, newest first, each with its final counts by status (``counts``, a Counter): of
    ``image`` (alias or reference) and ``job``, in one of ``states``, started at or after
    ``since`` (UTC), each filter only when given."""
    from ..store import queries
    from .session import engine

    with engine(db).connect() as conn:  # Core: listing runs loads no ORM
        runs = queries.list_runs(conn, limit, image, job=job, states=states, since=since)
        return _rows(runs, queries.run_statuses(conn, [r[0] for r in runs]))


def _rows(
    runs: Sequence[RunLine], statuses: Iterable[tuple[str, str, int, str]]
) -> list[dict[str, Any]]:
    attempts: dict[str, list[tuple[str, int, str]]] = {}
    for run_id, check_id, attempt, status in statuses:
        attempts.setdefault(run_id, []).append((check_id, attempt, status))
    return [
        {
            "run": rid,
            "image": alias,
            "digest": digest,
            "host": host,
            "job": job,
            "state": state,
            "started": started,
            "counts": final_counts(attempts.get(rid, ())),
        }
        for rid, started, job, state, alias, digest, host in runs
    ]
