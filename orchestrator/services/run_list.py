"""``valorch results list``: the newest runs, each with its final counts by status; and
``valorch inventory list``: the runs that hold an inventory. Both read with Core
(store/reads.py, services/session.read): a listing loads no ORM and no pydantic."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from ..errors import InputError
from ..matrix.model import final_counts

if TYPE_CHECKING:
    from sqlalchemy.engine import Connection

#: a run's states (store.tables.run's state), what ``results list --state`` accepts
RUN_STATES = ("running", "done", "failed", "interrupted")


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
    from ..store import reads
    from .session import read

    which = reads.Listing(limit, image, job, states, since)

    def listed(db: Connection) -> list[dict[str, Any]]:
        runs = reads.list_runs(db, which)
        attempts: dict[str, list[tuple[str, int, str]]] = {}
        for run_id, check_id, attempt, status in reads.listed_statuses(db, which):
            attempts.setdefault(run_id, []).append((check_id, attempt, status))
        rows: list[dict[str, Any]] = [
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
        if any(r.state == "running" for r in runs):
            metas = reads.running_metas(db, which)
            for row in rows:
                row["state"] = shown_state(row["state"], metas.get(row["run"]))
        return rows

    return read(db, listed)


def shown_state(state: str, meta: Any) -> str:
    """A run's state, or ``abandoned`` (not stored: decided when read) for a ``running`` run
    whose owner (the valorch process that ran it, executors/owner.py, in the run's meta) died
    without marking it: ``valorch run --resume`` finishes it."""
    if state == "running" and isinstance(meta, dict):
        from ..executors import owner

        mine = meta.get("_owner")
        if isinstance(mine, str) and owner.orphaned(mine):
            return "abandoned"
    return str(state)


def inventories(db: str | None, image: str | None, limit: int) -> list[dict[str, Any]]:
    """The stored inventories (the runs that hold one), newest first; of ``image`` (alias or
    reference) when given."""
    from ..store import reads
    from .session import read

    return [
        {
            "run": r.id,
            "image": r.alias,
            "reference": r.reference,
            "digest": r.digest,
            "job": r.job,
            "started": r.started.isoformat(timespec="seconds"),
        }
        for r in read(db, lambda conn: reads.inventory_runs(conn, image, limit))
    ]
