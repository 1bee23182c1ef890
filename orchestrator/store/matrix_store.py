"""Reads for the matrix (the runs and attempts its evidence walk reads) and published matrix versions.
Takes the caller's session; committing is the caller's business."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Sequence

from sqlalchemy import select
from sqlalchemy.orm import Session

from . import queries
from .models import Check, Host, Image, InventoryRow, MatrixCell, MatrixVersion, Result, Run, TaskRow


class VersionExistsError(ValueError):
    pass


@dataclass(frozen=True)
class RunLite:
    """A finished run as the matrix's evidence walk reads it: no ORM object, no JSON."""

    id: str
    image_id: int
    host_id: int
    job: str
    cpu_only: bool
    started: datetime
    ended: datetime | None
    state: str


def _run_conditions(images: Sequence[int] | None, since: datetime | None, job: str | None) -> list[Any]:
    cond: list[Any] = [Run.state.in_(queries.FINISHED)]
    if job is not None:
        cond.append(Run.job == job)
    if since is not None:
        cond.append(Run.started >= since)
    if images is not None:
        cond.append(Run.image_id.in_(list(images)))
    return cond


def candidate_runs(session: Session, selectors: Sequence[str] = (), since: datetime | None = None,
                   job: str | None = None) -> list[RunLite]:
    """Every finished run that may speak for a matrix (images by alias glob, runs by job and
    start), newest first. Columns only: a long history is tens of thousands of small rows."""
    images = queries.image_ids(session, globs=selectors)
    if images is not None and not images:
        return []
    q = (select(Run.id, Run.image_id, Run.host_id, Run.job, Run.cpu_only, Run.started, Run.ended, Run.state)
         .where(*_run_conditions(images, since, job)).order_by(Run.started.desc(), Run.id.desc()))
    return [RunLite(*row) for row in session.execute(q)]


def images_of(session: Session, ids: Sequence[int]) -> dict[int, dict[str, Any]]:
    """image id → alias, reference, digest, backend, components (the image table is small)."""
    if not ids:
        return {}
    q = select(Image.id, Image.alias, Image.reference, Image.digest, Image.backend, Image.components)
    return {r.id: dict(r._mapping) for r in session.execute(q.where(Image.id.in_(sorted(set(ids)))))}


def hosts_of(session: Session, ids: Sequence[int]) -> dict[int, dict[str, Any]]:
    """host id → name, spec (GPUs: the host class)."""
    if not ids:
        return {}
    q = select(Host.id, Host.name, Host.spec).where(Host.id.in_(sorted(set(ids))))
    return {r.id: dict(r._mapping) for r in session.execute(q)}


def suites_by_run(session: Session, selectors: Sequence[str] = (), since: datetime | None = None,
                  job: str | None = None) -> dict[str, set[str]]:
    """run id → the suites its tasks ran, for every run ``candidate_runs`` gives (one
    statement over the task table, which holds a row per run and suite, not per result)."""
    images = queries.image_ids(session, globs=selectors)
    if images is not None and not images:
        return {}
    q = (select(TaskRow.run_id, TaskRow.suite).join(Run, Run.id == TaskRow.run_id)
         .where(*_run_conditions(images, since, job)))
    out: dict[str, set[str]] = {}
    for run_id, suite in session.execute(q):
        out.setdefault(run_id, set()).add(suite)
    return out


@dataclass(frozen=True)
class PlanRow:
    run_id: str
    suite: str
    filtered: bool  # a check filter narrowed the suite (SuiteRef.checks)
    state: str


@dataclass(frozen=True)
class AttemptRow:
    """One attempt, as the matrix reads it: without its log, metrics or samples."""

    run_id: str
    suite: str | None
    check_id: str
    version: int
    feature: str
    kind: str
    attempt: int
    status: str
    message: str
    device: str | None
    library: str | None


def _chunks(ids: Sequence[str], size: int = 500) -> list[list[str]]:
    ids = list(ids)
    return [ids[i:i + size] for i in range(0, len(ids), size)]


def plans_of(session: Session, run_ids: Sequence[str]) -> list[PlanRow]:
    out = []
    for part in _chunks(run_ids):
        q = select(TaskRow.run_id, TaskRow.suite, TaskRow.suite_spec, TaskRow.state).where(TaskRow.run_id.in_(part))
        out.extend(PlanRow(r.run_id, r.suite, bool((r.suite_spec or {}).get("checks")), r.state)
                   for r in session.execute(q))
    return out


def attempts_of(session: Session, run_ids: Sequence[str]) -> list[AttemptRow]:
    """Every attempt of these runs with its check and its task's suite, in storage order."""
    out = []
    for part in _chunks(run_ids):
        q = (select(Result.run_id, TaskRow.suite, Check.check_id, Check.version, Check.feature, Check.kind,
                    Result.attempt, Result.status, Result.message, Result.device, Result.library)
             .join(Check, Check.id == Result.check_pk).outerjoin(TaskRow, TaskRow.id == Result.task_id)
             .where(Result.run_id.in_(part)).order_by(Result.id))
        out.extend(AttemptRow(*row) for row in session.execute(q))
    return out


def ended_of(session: Session, run_ids: Sequence[str]) -> list[datetime]:
    if not run_ids:
        return []
    return [e for e in session.scalars(select(Run.ended).where(Run.id.in_(run_ids))) if e is not None]


def newest_components_by_image(session: Session) -> dict[str, tuple[str, dict[str, str]]]:
    """Every image at once: alias → (run id, component → value) of its newest run that has an
    inventory (the matrix's components layout). One image's whole Inventory:
    ``inventory_queries.newest_inventory_of``."""
    out: dict[str, tuple[str, dict[str, str]]] = {}
    q = select(Run).where(Run.id.in_(select(InventoryRow.run_id))).order_by(Run.started, Run.id)
    for run in session.scalars(q).unique():
        rows = session.scalars(select(InventoryRow).where(InventoryRow.run_id == run.id))
        out[run.image.alias] = (run.id, {r.component: r.value for r in rows})
    return out


def publish(session: Session, version: str, doc: dict[str, Any], published: datetime,
            last_verified: datetime) -> MatrixVersion:
    """Store a document as an immutable version: one matrix_cell per table cell, the
    layout (headers, row order and labels, notes, header) in matrix_version.meta."""
    if session.scalars(select(MatrixVersion).where(MatrixVersion.version == version)).first() is not None:
        raise VersionExistsError(version)
    meta = {k: v for k, v in doc.items() if k != "rows"}
    meta["rows"] = [{"key": r["key"], "labels": r["labels"]} for r in doc["rows"]]
    mv = MatrixVersion(version=version, published=published, last_verified=last_verified,
                       source="\n".join(doc["source_of_truth"]), meta=meta)
    session.add(mv)
    session.flush()
    for r in doc["rows"]:
        for col, c in r["cells"].items():
            session.add(MatrixCell(matrix_id=mv.id, row=r["key"], column=col, verdict=c["verdict"] or "",
                                   statuses=c["statuses"], runs=c["runs"],
                                   meta={"text": c["text"], "note": c["note"], "when": c.get("when", ""),
                                         "flags": list(c.get("flags", ()))}))
    session.flush()
    return mv


def load(session: Session, version: str) -> dict[str, Any] | None:
    """The document a version was published with (Document.to_dict form)."""
    mv = session.scalars(select(MatrixVersion).where(MatrixVersion.version == version)).first()
    if mv is None:
        return None
    cells = {(c.row, c.column): c for c in mv.cells}
    doc = {k: v for k, v in mv.meta.items() if k != "rows"}
    doc["rows"] = [{"key": r["key"], "labels": r["labels"],
                    "cells": {col: {"text": cells[(r["key"], col)].meta["text"], "verdict": cells[(r["key"], col)].verdict,
                                    "statuses": cells[(r["key"], col)].statuses, "runs": cells[(r["key"], col)].runs,
                                    "note": cells[(r["key"], col)].meta["note"],
                                    "when": cells[(r["key"], col)].meta.get("when", ""),
                                    "flags": cells[(r["key"], col)].meta.get("flags", [])} for col in doc["columns"]}}
                   for r in mv.meta["rows"]]
    return doc


def versions(session: Session) -> list[MatrixVersion]:
    return list(session.scalars(select(MatrixVersion).order_by(MatrixVersion.published, MatrixVersion.id)))
