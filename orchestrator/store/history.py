"""A check's history across runs: the rows behind a trend page.

One query over index ix_result_check_pk joined with the run by its primary key:
after years of nightlies a check has tens of thousands of results, and reading
them must not mean reading the other checks' (bench/bench_scale_fleet.py).
Takes the caller's connection (a session's: ``session.connection()``); a Core select on
store/tables.py, it loads no ORM, and points are made with ``Point._make`` (tuple.__new__ in
C), a third cheaper per point (docs/benchmarks.md, "Fleet scale").
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, NamedTuple

from sqlalchemy import LargeBinary, Text, case, func, select, type_coerce

from . import queries, tables
from .coltypes import SUMMARY, stored_metrics, stored_samples

if TYPE_CHECKING:
    from sqlalchemy.engine import Connection


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
    conn: Connection,
    check_id: str,
    *,
    images: Sequence[str] = (),
    job: str | None = None,
    since: datetime | None = None,
) -> list[Point]:
    """Every attempt of ``check_id`` (all its versions) in finished runs, oldest first; optionally
    only some image aliases, one job, runs started since a date.

    Result ⋈ run only; image, host and check names come from their small tables. Columns are read
    raw (dates, sample bytes, metrics only where samples were pruned) and decoded here with C-speed
    parsers: SQLAlchemy's per-row type processing cost four times the query at 50,000 points."""
    chk, img, hst = tables.check.c, tables.image.c, tables.host.c
    res, run = tables.result.c, tables.run.c
    versions = dict(conn.execute(select(chk.id, chk.version).where(chk.check_id == check_id)).all())
    if not versions:
        return []
    aliases = dict(conn.execute(select(img.id, img.alias)).all())
    hosts = dict(conn.execute(select(hst.id, hst.name)).all())
    pruned = case((func.length(res.samples) == 0, type_coerce(res.metrics, Text)), else_=None)
    q = (
        select(
            res.run_id,
            type_coerce(run.started, Text) if conn.dialect.name == "sqlite" else run.started,
            run.job,
            run.image_id,
            run.host_id,
            res.check_pk,
            res.attempt,
            res.status,
            type_coerce(res.samples, LargeBinary),
            pruned,
        )
        .join_from(tables.result, tables.run, run.id == res.run_id)
        .where(res.check_pk.in_(list(versions)), run.state.in_(queries.FINISHED))
        .order_by(run.started, res.run_id, res.attempt)
    )
    if images:
        ids = queries.image_ids(conn, aliases=images) or []
        if not ids:
            return []
        q = q.where(run.image_id.in_(ids))
    if job is not None:
        q = q.where(run.job == job)
    if since is not None:
        q = q.where(run.started >= since)
    out = []
    parse = datetime.fromisoformat
    make = Point._make  # tuple.__new__ in C: cheaper per point than Point(...)
    # SQLite's dates are ISO text: read raw, fromisoformat parses them fast
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
    ) in conn.execute(q):
        samples = stored_samples(blob)
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


def _median(samples: tuple[float, ...], metrics: str | dict[str, Any] | None) -> float | None:
    if samples:
        v, n = sorted(samples), len(samples)
        return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2
    if not metrics:
        return None
    kept = (stored_metrics(metrics) or {}).get(SUMMARY)
    return float(kept["median"]) if isinstance(kept, dict) and "median" in kept else None
