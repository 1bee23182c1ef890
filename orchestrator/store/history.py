"""A check's history across runs: the rows behind a trend page.

One query over index ix_result_check_pk joined with the run by its primary key:
after years of nightlies a check has tens of thousands of results, and reading
them must not mean reading the other checks' (bench/bench_scale_fleet.py).
Takes the caller's session; committing is the caller's business.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from datetime import datetime
from typing import Sequence

from sqlalchemy import select
from sqlalchemy.orm import Session

from . import queries
from .models import Check, Host, Image, Result, Run
from .retention import SUMMARY


@dataclass(frozen=True)
class Point:
    """One attempt of the check in one run."""

    run_id: str
    started: datetime
    job: str
    image: str
    host: str
    version: int
    attempt: int
    status: str
    samples: tuple[float, ...]
    median: float | None  # of the samples, or of what a prune kept of them (store/retention.py)


def check_history(session: Session, check_id: str, *, images: Sequence[str] = (), job: str | None = None,
                  since: datetime | None = None) -> list[Point]:
    """Every attempt of ``check_id`` (all its versions) in finished runs, oldest first;
    optionally only some image aliases, one job, runs started since a date."""
    pks = list(session.scalars(select(Check.id).where(Check.check_id == check_id)))
    if not pks:
        return []
    q = (select(Result.run_id, Run.started, Run.job, Image.alias, Host.name, Check.version, Result.attempt,
                Result.status, Result.samples, Result.metrics)
         .join(Run, Run.id == Result.run_id).join(Image, Image.id == Run.image_id)
         .join(Host, Host.id == Run.host_id).join(Check, Check.id == Result.check_pk)
         .where(Result.check_pk.in_(pks), Run.state.in_(queries.FINISHED))
         .order_by(Run.started, Result.run_id, Result.attempt))
    if images:
        ids = queries.image_ids(session, aliases=images) or []
        if not ids:
            return []
        q = q.where(Run.image_id.in_(ids))
    if job is not None:
        q = q.where(Run.job == job)
    if since is not None:
        q = q.where(Run.started >= since)
    return [Point(run_id, started, job_, alias, host, version, attempt, status, tuple(samples), _median(samples, metrics))
            for run_id, started, job_, alias, host, version, attempt, status, samples, metrics in session.execute(q)]


def _median(samples: list[float], metrics: dict | None) -> float | None:
    if samples:
        return statistics.median(samples)
    kept = (metrics or {}).get(SUMMARY)
    return float(kept["median"]) if isinstance(kept, dict) and "median" in kept else None

