"""The reads a command makes before anything else (``results list``, the run plan's
history), written once and run two ways (docs/architecture.md, "Reads without
SQLAlchemy"):

- on SQLAlchemy Core, any store: ``store/read_statements.py`` holds the statements;
- on the standard library's sqlite3, for a SQLite file at this valorch's schema: the same
  statements compiled ahead of time for SQLite (``store/compiled_reads.py``, generated,
  kept equal to the generator by a test) and run by ``store/sqlite_reads.py``, so that a
  read-only command starts without importing SQLAlchemy.

Each statement takes every filter as a bound parameter (None, or ``any_state``: no filter),
so one statement serves every call. This module shapes the parameters and the rows for
both; it imports no SQLAlchemy.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, NamedTuple, Protocol

#: the --state filter's slots: a run has four states (running, done, failed, interrupted)
STATE_SLOTS = 4


class Reads(Protocol):
    """Runs one of the named statements (``read_statements.STATEMENTS``) with its bound
    parameters, returning its rows as tuples of Python values."""

    def rows(self, name: str, params: Mapping[str, Any]) -> Iterable[Sequence[Any]]: ...


class RunLine(NamedTuple):
    """A listed run (``list_runs``): its row with its image's alias and digest and its
    host's name."""

    id: str
    started: datetime
    job: str
    state: str
    image: str
    digest: str | None
    host: str


@dataclass(frozen=True)
class Listing:
    """Which runs ``results list`` shows: the newest ``limit`` (ties in start time broken by
    id), of ``image`` (alias or reference), ``job``, in one of ``states``, started at or
    after ``since``; each filter only when given."""

    limit: int = 50
    image: str | None = None
    job: str | None = None
    states: tuple[str, ...] = ()
    since: datetime | None = None

    def params(self) -> dict[str, Any]:
        """The parameters of ``runs_listed`` and ``statuses_listed``: each filter, or None."""
        wanted = tuple(dict.fromkeys(self.states))
        if len(wanted) > STATE_SLOTS:
            raise ValueError(f"at most {STATE_SLOTS} run states, not {wanted}")
        slots = (wanted + (wanted[:1] or ("",)) * STATE_SLOTS)[:STATE_SLOTS]  # padded
        return {
            "limit": self.limit,
            "image": self.image,
            "job": self.job,
            "any_state": not wanted,
            **{f"state_{i}": s for i, s in enumerate(slots, 1)},
            "since": self.since,
        }


def list_runs(db: Reads, listing: Listing) -> list[RunLine]:
    """The runs ``listing`` names, newest first."""
    return [RunLine._make(row) for row in db.rows("runs_listed", listing.params())]


def listed_statuses(db: Reads, listing: Listing) -> list[tuple[str, str, int, str]]:
    """(run id, check id, attempt, status) of every result of the runs ``listing`` names,
    attempts in order: one statement, not one per run."""
    return [(r[0], r[1], r[2], r[3]) for r in db.rows("statuses_listed", listing.params())]


def listed_owners(db: Reads, listing: Listing) -> dict[str, str | None]:
    """The owner label (``executors/owner.me``, in the run's meta) of each listed run that
    is still ``running``: a run whose owner died is abandoned."""
    out: dict[str, str | None] = {}
    for run_id, meta in db.rows("owners_listed", listing.params()):
        owner = (meta or {}).get("_owner") if isinstance(meta, dict) else None
        out[run_id] = owner if isinstance(owner, str) else None
    return out


def suite_durations(db: Reads, limit: int = 500) -> dict[tuple[str, str], float]:
    """The last measured duration of each (image alias, suite), for placement and ETAs: the
    run's plan reads it before its first container starts."""
    out: dict[tuple[str, str], float] = {}
    for alias, suite, timings in db.rows("suite_durations", {"limit": limit}):
        total = (timings or {}).get("total_s")
        if total and (alias, suite) not in out:
            out[(alias, suite)] = float(total)
    return out
