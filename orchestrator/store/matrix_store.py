"""Reads for the matrix (which runs speak for it) and published matrix versions.
Takes the caller's session; committing is the caller's business."""

from __future__ import annotations

from dataclasses import dataclass
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


@dataclass(frozen=True)
class CheckRow:
    id: int
    check_id: str
    version: int
    feature: str
    kind: str
    library: str | None
    unit: str | None
    bigger_is_better: bool


@dataclass(frozen=True)
class ResultRow:
    """What a matrix reads of one attempt: a ``Result``'s attributes without its log,
    metrics or samples, and without an ORM object (bench/bench_scale_fleet.py: loading
    ORM results was most of a matrix render)."""

    run_id: str
    check: CheckRow
    attempt: int
    status: str
    message: str
    device: str | None
    library: str | None


def observation_rows(session: Session, run_ids: Sequence[str]) -> list[ResultRow]:
    if not run_ids:
        return []
    q = (select(Result.run_id, Result.check_pk, Result.attempt, Result.status, Result.message, Result.device,
                Result.library).where(Result.run_id.in_(list(run_ids))).order_by(Result.id))
    rows = list(session.execute(q))
    checks = {c.id: CheckRow(c.id, c.check_id, c.version, c.feature, c.kind, c.library, c.unit, c.bigger_is_better)
              for c in session.execute(select(Check.__table__).where(Check.id.in_({r.check_pk for r in rows})))}
    return [ResultRow(r.run_id, checks[r.check_pk], r.attempt, r.status, r.message, r.device, r.library)
            for r in rows]


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
