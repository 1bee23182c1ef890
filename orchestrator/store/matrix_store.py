"""Reads for the matrix (which runs speak for it) and published matrix versions.
Takes the caller's session; committing is the caller's business."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Sequence

from sqlalchemy import select
from sqlalchemy.orm import Session

from . import queries
from .models import Check, InventoryRow, MatrixCell, MatrixVersion, Result, Run


class VersionExistsError(ValueError):
    pass


def matrix_runs(session: Session, selectors: Sequence[str] = (), since: datetime | None = None,
                job: str | None = None) -> list[Run]:
    """The newest finished run of each (image, host), images filtered by alias globs,
    runs by job when one is named."""
    return queries.newest_runs(session, by_host=True, job=job, since=since,
                               images=queries.image_ids(session, globs=selectors))


def results_of(session: Session, run_ids: Sequence[str]) -> list[Result]:
    if not run_ids:
        return []
    return list(session.scalars(select(Result).where(Result.run_id.in_(run_ids)).order_by(Result.id)).unique())


def observation_rows(session: Session, run_ids: Sequence[str]) -> list[Any]:
    """What a matrix cell needs of each attempt of these runs, as plain rows (run_id,
    check_id, feature, kind, library, status, attempt, message): no samples, metrics or
    logs decoded, no ORM objects (bench/bench_scale_fleet.py: most of a matrix render)."""
    if not run_ids:
        return []
    q = (select(Result.run_id, Check.check_id, Check.feature, Check.kind, Check.library, Result.status,
                Result.attempt, Result.message).join(Check, Check.id == Result.check_pk)
         .where(Result.run_id.in_(list(run_ids))).order_by(Result.id))
    return list(session.execute(q))


def ended_of(session: Session, run_ids: Sequence[str]) -> list[datetime]:
    if not run_ids:
        return []
    return [e for e in session.scalars(select(Run.ended).where(Run.id.in_(run_ids))) if e is not None]


def latest_inventory(session: Session) -> dict[str, tuple[str, dict[str, str]]]:
    """image alias → (run id, component → value) of its newest run that has an inventory."""
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
                                   statuses=c["statuses"], runs=c["runs"], meta={"text": c["text"], "note": c["note"]}))
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
                                    "note": cells[(r["key"], col)].meta["note"]} for col in doc["columns"]}}
                   for r in mv.meta["rows"]]
    return doc


def versions(session: Session) -> list[MatrixVersion]:
    return list(session.scalars(select(MatrixVersion).order_by(MatrixVersion.published, MatrixVersion.id)))
