"""What readiness counts: the finished runs of a job between two times, each with its image
(alias, family, backend), its host's spec and every attempt's status."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Select, select
from sqlalchemy.orm import Session

from .models import Check, Host, Image, Result, Run, TaskRow
from .queries import FINISHED


def _env() -> Select[Any]:
    return (
        select(Run.id, Run.started, Run.ended, Image.alias, Image.family, Image.backend, Host.spec)
        .join(Image, Run.image_id == Image.id)
        .join(Host, Run.host_id == Host.id)
    )


def job_runs(
    session: Session, job: str | None, start: datetime | None, end: datetime | None
) -> list[dict[str, Any]]:
    """run id, started, ended, alias, family, backend, host spec of the finished runs of
    ``job`` (None: every job) that started in [start, end), oldest first."""
    q = _env().where(Run.state.in_(FINISHED)).order_by(Run.started)
    if job is not None:
        q = q.where(Run.job == job)
    if start is not None:
        q = q.where(Run.started >= start)
    if end is not None:
        q = q.where(Run.started < end)
    return [dict(r._mapping) for r in session.execute(q)]


def runs_env(session: Session, run_ids: Sequence[str]) -> list[dict[str, Any]]:
    """The same facts as ``job_runs`` for given runs (a baseline's or a batch's)."""
    q = _env().where(Run.id.in_(list(run_ids)))
    return [dict(r._mapping) for r in session.execute(q)]


def results(session: Session, run_ids: Sequence[str]) -> list[tuple[Any, ...]]:
    """(run, check id, attempt, status, task id, definition hash) of every result of
    ``run_ids``, in attempt order."""
    if not run_ids:
        return []
    q = (
        select(
            Result.run_id,
            Check.check_id,
            Result.attempt,
            Result.status,
            Result.task_id,
            Result.definition,
        )
        .join(Check, Check.id == Result.check_pk)
        .where(Result.run_id.in_(list(run_ids)))
        .order_by(Result.run_id, Result.attempt)
    )
    return [tuple(r) for r in session.execute(q)]


def suite_specs(session: Session, task_ids: Sequence[int]) -> dict[int, dict[str, Any]]:
    """Each task's suite as the run asked for it (its commands' declarations)."""
    ids = sorted({t for t in task_ids if t is not None})
    if not ids:
        return {}
    q = select(TaskRow.id, TaskRow.suite_spec).where(TaskRow.id.in_(ids))
    return {i: spec or {} for i, spec in session.execute(q)}


def known_jobs(session: Session) -> list[str]:
    return sorted(set(session.scalars(select(Run.job).distinct())))
