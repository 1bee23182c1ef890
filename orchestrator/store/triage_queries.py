"""The history triage compares a failing check with: the same checks' results in the other
finished runs of the same image (by alias, any digest), with their digests and hosts; and
the triage stored beside a run. Core selects on the tables (``results show`` reads the
stored triage without loading the ORM); ``save`` alone writes, through the caller's
session."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import Text, cast, delete, insert, or_, select

from . import tables

if TYPE_CHECKING:
    from sqlalchemy.engine import Connection
    from sqlalchemy.orm import Session

Run, Image, Host = tables.run.c, tables.image.c, tables.host.c
Result, Check, TaskRow, TriageRow = tables.result.c, tables.check.c, tables.task.c, tables.triage.c

FINISHED = ("done", "failed")


def check_history(
    session: Session, alias: str, check_ids: Sequence[str], exclude_run: str
) -> list[tuple[str, str, str, dict[str, Any], datetime, str, int, str, str | None]]:
    """(run, digest, host name, host spec, started, check id, attempt, status, definition hash)
    of ``check_ids`` in the finished runs of image ``alias`` other than ``exclude_run``, oldest
    first."""
    if not check_ids:
        return []
    q = (
        select(
            Run.id,
            Image.digest,
            Host.name,
            Host.spec,
            Run.started,
            Check.check_id,
            Result.attempt,
            Result.status,
            Result.definition,
        )
        .join(tables.image, Run.image_id == Image.id)
        .join(tables.host, Run.host_id == Host.id)
        .join(tables.result, Result.run_id == Run.id)
        .join(tables.check, Result.check_pk == Check.id)
        .where(
            Image.alias == alias,
            Run.id != exclude_run,
            Run.state.in_(FINISHED),
            Run.cpu_only.is_(False),
            Check.check_id.in_(list(check_ids)),
        )
        .order_by(Run.started, Result.attempt)
    )
    return [tuple(r) for r in session.execute(q)]


def host_events(
    session: Session, host: str, start: datetime, end: datetime
) -> list[tuple[str, str, str]]:
    """(run, when, what) of the preflight failures and quarantines of ``host`` the runs
    started between ``start`` and ``end`` recorded in their meta (``preflight_after``: L0 of
    the run's own host after it failed; ``quarantined``: hosts its batch left out)."""
    # (when, why) -> event: a batch's quarantine is on each run
    found: dict[tuple[str, str], tuple[str, str, str]] = {}
    q = (
        select(Run.id, Run.meta, Host.name, Run.batch)
        .join(tables.host, Run.host_id == Host.id)
        .where(
            Run.started.between(start, end),
            # the host's own runs, and those that recorded a quarantine: not every run of a busy day
            or_(Host.name == host, cast(Run.meta, Text).like('%"quarantined"%')),
        )
    )
    for rid, meta, name, batch in session.execute(q.order_by(Run.started)):
        meta = meta or {}
        after = meta.get("preflight_after") or {}
        if name == host and isinstance(after, dict) and after.get("ok") is False:
            why = f"L0 preflight after run {rid[:8]} failed: {after.get('reason', '')}"
            found.setdefault((str(after.get("at", "")), why), (rid, str(after.get("at", "")), why))
        for event in meta.get("quarantined") or ():
            if isinstance(event, dict) and event.get("host") == host:
                at = str(event.get("at", ""))
                why = f"quarantined by the L0 preflight of batch {batch[:8]}: {event.get('reason', '')}"
                found.setdefault((at, str(event.get("reason", ""))), (rid, at, why))
    return sorted(found.values(), key=lambda e: e[1])


def save(
    session: Session,
    run_id: str,
    rows: Sequence[tuple[str, str, str, dict[str, Any]]],
    when: datetime,
) -> int:
    """Replace the stored triage of a run with ``rows`` (subject, class, reason, evidence): a
    check's is kept on the result row of its last attempt, a suite's ("suite NAME") on its task."""
    session.execute(delete(tables.triage).where(TriageRow.run_id == run_id))
    q = (
        select(Check.check_id, Result.id)
        .join(tables.check, Result.check_pk == Check.id)
        .where(Result.run_id == run_id)
        .order_by(Result.attempt)
    )
    last: dict[str, int] = dict(session.execute(q).all())  # each check's last attempt wins
    tasks = {
        f"suite {suite}": tid
        for tid, suite in session.execute(
            select(TaskRow.id, TaskRow.suite).where(TaskRow.run_id == run_id)
        )
    }
    stored = [
        {
            "run_id": run_id,
            "result_id": last.get(subject),
            "task_id": tasks.get(subject),
            "subject": subject,
            "cls": cls,
            "reason": reason,
            "evidence": evidence,
            "computed": when,
        }
        for subject, cls, reason, evidence in rows
        if subject in last or subject in tasks
    ]
    if stored:
        session.execute(insert(tables.triage), stored)
    return len(stored)


def failed_tasks(session: Session, run_id: str) -> list[tuple[str, str]]:
    """(suite, error) of a run's tasks that ended in an infrastructure error (no results stored)."""
    q = select(TaskRow.suite, TaskRow.error).where(
        TaskRow.run_id == run_id, TaskRow.state == "error"
    )
    return [(suite, error or "") for suite, error in session.execute(q.order_by(TaskRow.id))]


def stored(
    session: Connection | Session, run_id: str
) -> dict[str, tuple[str, str, dict[str, Any]]] | None:
    """subject (check id or "suite NAME") -> (class, reason, evidence) of a run's stored triage;
    None when it has none (a run from before migration 0007, or one still running)."""
    q = select(TriageRow.subject, TriageRow.cls, TriageRow.reason, TriageRow.evidence).where(
        TriageRow.run_id == run_id
    )
    rows = session.execute(q).all()
    marked = session.scalar(select(Run.meta).where(Run.id == run_id)) or {}
    if not rows and not marked.get("triaged"):
        return None
    return {c: (cls, reason, dict(ev or {})) for c, cls, reason, ev in rows}


def untriaged(session: Session, run_ids: Sequence[str]) -> list[str]:
    """Those of ``run_ids`` that are finished and hold no triage rows here (pushed or imported
    runs: their meta may say they were triaged where they came from; the rows stay there)."""
    have = select(TriageRow.run_id).where(TriageRow.run_id.in_(list(run_ids)))
    q = select(Run.id).where(
        Run.id.in_(list(run_ids)), Run.state.in_(FINISHED), Run.id.not_in(have)
    )
    return list(session.scalars(q))


def stored_all(session: Session) -> dict[str, dict[str, tuple[str, str]]]:
    """run id -> check id -> (class, reason) of every stored triage (the site's run pages)."""
    q = select(TriageRow.run_id, TriageRow.subject, TriageRow.cls, TriageRow.reason)
    out: dict[str, dict[str, tuple[str, str]]] = {}
    for rid, check, cls, reason in session.execute(q):
        out.setdefault(rid, {})[check] = (cls, reason)
    return out
