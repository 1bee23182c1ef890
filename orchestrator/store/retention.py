"""Retention (`valorch results prune`): what may go, and removing it.

Two things age out: the raw timing samples of old runs (their verdicts stay, and a
summary of the samples is kept in the result's metrics, so trends still have a
point), and whole ad-hoc runs (`valorch run --image ...`, job "adhoc").

Never touched: runs a baseline names (directly or through its matrix version), the
newest finished run of each job, image and host (the live matrix), and runs still
running. Runs of published matrix versions are kept whole with ``keep_published``;
without it only their raw samples may go, never the runs. Takes the caller's session.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, cast

from sqlalchemy import CursorResult, bindparam, delete, func, select, update
from sqlalchemy.orm import Session

from . import tables
from .coltypes import SUMMARY  # the metrics key that keeps what pruned samples said
from .push import result_counts
from .queries import FINISHED, chunks, newest_of

Run, Image, Result = tables.run.c, tables.image.c, tables.result.c
Baseline, MatrixVersion, MatrixCell = (
    tables.baseline.c,
    tables.matrix_version.c,
    tables.matrix_cell.c,
)

ADHOC = "adhoc"  # the job name of `valorch run --image` runs


@dataclass(frozen=True)
class RunRef:
    id: str
    job: str
    image: str
    started: datetime
    results: int = 0


@dataclass(frozen=True)
class Plan:
    cutoff: datetime
    delete: tuple[RunRef, ...] = ()  # whole runs
    strip: tuple[str, ...] = ()  # runs whose raw samples go
    strip_results: int = 0
    strip_bytes: int = 0
    kept: dict[str, int] = field(default_factory=dict)  # reason -> old runs kept for it


def protected(session: Session) -> dict[str, set[str]]:
    """Run ids that a baseline, a published matrix version or the live matrix refers to."""
    baseline: set[str] = set()
    versions: set[str] = set()
    for run_id, version in session.execute(select(Baseline.run_id, Baseline.matrix_version)):
        if run_id:
            baseline.add(run_id)
        if version:
            versions.add(version)
    published: set[str] = set()
    q = select(MatrixVersion.version, MatrixCell.runs).join_from(
        tables.matrix_version, tables.matrix_cell, MatrixCell.matrix_id == MatrixVersion.id
    )
    for version, runs in session.execute(q):
        ids = {str(r) for r in runs or ()}
        if version in versions:
            baseline |= ids
        published |= ids
    cond = [Run.state.in_(FINISHED)]
    groups, on = newest_of(("job", "image_id", "host_id"), cond)
    newest = set(session.scalars(select(Run.id).join_from(tables.run, groups, on)))
    return {"baseline": baseline, "newest": newest, "published": published}


def plan(
    session: Session,
    cutoff: datetime,
    keep_published: bool,
    confirmed: set[str] | None = None,
    delete_all: bool = False,
) -> Plan:
    """What a prune would do. ``confirmed``: only these runs may be touched (the ones a
    server holds, for a runner's local store); ``delete_all``: old runs of any job go
    whole, not only ad-hoc ones (they live on in the store that confirmed them)."""
    keep = protected(session)
    kept = {"baseline": 0, "newest": 0, "published": 0, "not on the server": 0}
    q = (
        select(Run.id, Run.job, Image.alias, Run.started, Run.pruned)
        .join_from(tables.run, tables.image, Image.id == Run.image_id)
        .where(Run.started < cutoff, Run.state != "running")
        .order_by(Run.started, Run.id)
    )
    delete_refs, strip = [], []
    for run_id, job, alias, started, pruned in session.execute(q):
        if run_id in keep["baseline"] or run_id in keep["newest"]:
            kept["baseline" if run_id in keep["baseline"] else "newest"] += 1
        elif confirmed is not None and run_id not in confirmed:
            kept["not on the server"] += 1
        elif run_id in keep["published"]:
            kept["published"] += 1  # never deleted; its raw samples go only without keep_published
            if not keep_published and pruned is None:
                strip.append(run_id)
        elif job == ADHOC or delete_all:
            delete_refs.append(RunRef(run_id, job, alias, started))
        elif pruned is None:
            strip.append(run_id)
    counts = result_counts(session, [r.id for r in delete_refs])
    delete_refs = [
        RunRef(r.id, r.job, r.image, r.started, counts.get(r.id, 0)) for r in delete_refs
    ]
    n, size = 0, 0
    for chunk in chunks(strip):
        got = session.execute(
            select(func.count(), func.coalesce(func.sum(func.length(Result.samples)), 0)).where(
                Result.run_id.in_(chunk), func.length(Result.samples) > 0
            )
        ).one()
        n, size = n + got[0], size + int(got[1])
    return Plan(
        cutoff, tuple(delete_refs), tuple(strip), n, size, {k: v for k, v in kept.items() if v}
    )


def _summary(samples: Sequence[float]) -> dict[str, float | int]:
    return {
        "n": len(samples),
        "median": statistics.median(samples),
        "min": min(samples),
        "max": max(samples),
    }


def apply(session: Session, p: Plan, now: datetime) -> dict[str, int]:
    """Carry a plan out in the caller's transaction; counts of what went."""
    stripped = 0
    set_samples = (
        update(tables.result)
        .where(Result.id == bindparam("rid"))
        .values(samples=bindparam("s"), metrics=bindparam("m"))
    )
    for chunk in chunks(p.strip):
        rows = session.execute(
            select(Result.id, Result.metrics, Result.samples).where(
                Result.run_id.in_(chunk), func.length(Result.samples) > 0
            )
        ).all()
        if rows:
            session.execute(
                set_samples,
                [
                    {"rid": rid, "s": [], "m": {**(metrics or {}), SUMMARY: _summary(samples)}}
                    for rid, metrics, samples in rows
                ],
            )
            stripped += len(rows)
        session.execute(update(tables.run).where(Run.id.in_(chunk)).values(pruned=now))
    deleted = results = 0
    for chunk in chunks([r.id for r in p.delete]):
        for table in (tables.triage, tables.result, tables.inventory, tables.task, tables.run):
            gone = cast(
                CursorResult[Any],  # a DELETE's result: it has a rowcount
                session.execute(
                    delete(table).where(
                        (table.c.id if table is tables.run else table.c.run_id).in_(chunk)
                    )
                ),
            )
            if table is tables.result:
                results += gone.rowcount or 0
            elif table is tables.run:
                deleted += gone.rowcount or 0
    return {"runs_deleted": deleted, "results_deleted": results, "samples_stripped": stripped}
