"""A check's history across runs: the rows behind a trend page.

One query over index ix_result_check_pk joined with the run by its primary key:
after years of nightlies a check has tens of thousands of results, and reading
them must not mean reading the other checks' (bench/bench_scale_fleet.py).
Takes the caller's session; committing is the caller's business.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any, NamedTuple

from sqlalchemy import LargeBinary, Text, case, func, select, type_coerce
from sqlalchemy.orm import Session

from . import queries
from .models import Check, Host, Image, Result, Run, samples_tuple
from .retention import SUMMARY


class Point(NamedTuple):
    """One attempt of the check in one run (a tuple: tens of thousands are built at once)."""

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


def check_history(
    session: Session,
    check_id: str,
    *,
    images: Sequence[str] = (),
    job: str | None = None,
    since: datetime | None = None,
) -> list[Point]:
    """Every attempt of ``check_id`` (all its versions) in finished runs, oldest first;
    optionally only some image aliases, one job, runs started since a date.

    Result ⋈ run only; image, host and check names come from their small tables. Columns
    are read raw (dates, sample bytes, metrics only where samples were pruned) and decoded
    here with C-speed parsers: SQLAlchemy's per-row type processing cost four times the
    query at 50,000 points."""
    versions = dict(
        session.execute(select(Check.id, Check.version).where(Check.check_id == check_id)).all()
    )
    if not versions:
        return []
    aliases = dict(session.execute(select(Image.id, Image.alias)).all())
    hosts = dict(session.execute(select(Host.id, Host.name)).all())
    pruned = case((func.length(Result.samples) == 0, type_coerce(Result.metrics, Text)), else_=None)
    q = (
        select(
            Result.run_id,
            type_coerce(Run.started, Text) if _text_dates(session) else Run.started,
            Run.job,
            Run.image_id,
            Run.host_id,
            Result.check_pk,
            Result.attempt,
            Result.status,
            type_coerce(Result.samples, LargeBinary),
            pruned,
        )
        .join(Run, Run.id == Result.run_id)
        .where(Result.check_pk.in_(list(versions)), Run.state.in_(queries.FINISHED))
        .order_by(Run.started, Result.run_id, Result.attempt)
    )
    if images:
        ids = queries.image_ids(session, aliases=images) or []
        if not ids:
            return []
        q = q.where(Run.image_id.in_(ids))
    if job is not None:
        q = q.where(Run.job == job)
    if since is not None:
        q = q.where(Run.started >= since)
    out = []
    parse = datetime.fromisoformat
    make = Point._make  # tuple.__new__ in C: cheaper per point than Point(...)
    # Core rows through the session's connection: the ORM's per-row result handling is not needed
    for (
        run_id,
        started,
        job_,
        image_id,
        host_id,
        check_pk,
        attempt,
        status,
        blob,
        metrics,
    ) in session.connection().execute(q):
        samples = samples_tuple(blob)
        out.append(
            make(
                (
                    run_id,
                    parse(started) if isinstance(started, str) else started,
                    job_,
                    aliases[image_id],
                    hosts[host_id],
                    versions[check_pk],
                    attempt,
                    status,
                    samples,
                    _median(samples, metrics),
                )
            )
        )
    return out


def _text_dates(session: Session) -> bool:
    return (
        session.get_bind().dialect.name == "sqlite"
    )  # stored as ISO text: fromisoformat reads them fast


def _median(samples: tuple[float, ...], metrics: str | dict[str, Any] | None) -> float | None:
    if samples:
        v, n = sorted(samples), len(samples)
        return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2
    if not metrics:
        return None
    kept = (json.loads(metrics) if isinstance(metrics, str) else metrics).get(SUMMARY)
    return float(kept["median"]) if isinstance(kept, dict) and "median" in kept else None
