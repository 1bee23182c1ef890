"""Reads for the matrix (the runs and attempts its evidence walk reads) and published matrix
versions: Core selects on a connection (``matrix render`` and ``matrix versions`` load no
ORM, store/reads.py says why); ``publish`` alone writes, through the caller's session, and
committing is the caller's business."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields
from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import Row, Text, cast, func, insert, select

from . import queries, tables

if TYPE_CHECKING:
    from sqlalchemy.engine import Connection
    from sqlalchemy.orm import Session

Run, Image, Host = tables.run.c, tables.image.c, tables.host.c
TaskRow, Result, Check = tables.task.c, tables.result.c, tables.check.c
InventoryRow, Version, Cell = tables.inventory.c, tables.matrix_version.c, tables.matrix_cell.c


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


@dataclass(frozen=True)
class RunGroup:
    """Finished runs of one image row on one host, of one job, --cpu-only or not: how many,
    and the suites their tasks ran (one row of a GROUP BY over an index, never a run each)."""

    image_id: int
    host_id: int
    cpu_only: bool
    job: str
    runs: int
    newest: datetime
    suites: frozenset[str] = frozenset()


def _run_conditions(
    images: Sequence[int] | None, since: datetime | None, job: str | None
) -> list[Any]:
    cond: list[Any] = [Run.state.in_(queries.FINISHED)]
    if job is not None:
        cond.append(Run.job == job)
    if since is not None:
        cond.append(Run.started >= since)
    if images is not None:
        cond.append(Run.image_id.in_(list(images)))
    return cond


def run_groups(
    conn: Connection | Session,
    selectors: Sequence[str] = (),
    since: datetime | None = None,
    job: str | None = None,
) -> list[RunGroup]:
    """The finished runs that may speak for a matrix (images by alias glob, runs by job and
    start), grouped by image row, host, --cpu-only and job, with their suites."""
    images = queries.image_ids(conn, globs=selectors)
    if images is not None and not images:
        return []
    cond = _run_conditions(images, since, job)
    keys = (Run.image_id, Run.host_id, Run.cpu_only, Run.job)
    q = select(*keys, func.count(), func.max(Run.started)).where(*cond).group_by(*keys)
    suites: dict[tuple[int, int, bool, str], set[str]] = {}
    for i, h, c, j, suite in conn.execute(
        select(*keys, TaskRow.suite)
        .join_from(tables.run, tables.task, TaskRow.run_id == Run.id)
        .where(*cond)
        .group_by(*keys, TaskRow.suite)
    ):
        suites.setdefault((i, h, c, j), set()).add(suite)
    return [
        RunGroup(i, h, bool(c), j, n, newest, frozenset(suites.get((i, h, c, j), ())))
        for i, h, c, j, n, newest in conn.execute(q)
    ]


def runs_of(
    conn: Connection | Session,
    groups: Sequence[RunGroup],
    since: datetime | None,
    offset: int,
    limit: int,
) -> tuple[list[RunLite], int]:
    """The runs of these groups (one environment), newest first, ``limit`` rows after ``offset``;
    and how many rows the statement gave (the next offset moves by that)."""
    cond = _run_conditions(sorted({g.image_id for g in groups}), since, None)
    pairs = {(g.image_id, g.host_id, g.cpu_only, g.job) for g in groups}
    cond += [
        Run.host_id.in_(sorted({g.host_id for g in groups})),
        Run.job.in_(sorted({g.job for g in groups})),
        Run.cpu_only.in_(sorted({g.cpu_only for g in groups})),
    ]
    q = (
        select(*(Run[f.name] for f in fields(RunLite)))  # RunLite's columns, in its order
        .where(*cond)
        .order_by(Run.started.desc(), Run.id.desc())
        .offset(offset)
        .limit(limit)
    )
    rows = list(conn.execute(q))
    # the IN lists make a product: keep only the runs of these very groups
    return [
        RunLite(*r) for r in rows if (r.image_id, r.host_id, bool(r.cpu_only), r.job) in pairs
    ], len(rows)


def images_of(conn: Connection | Session, ids: Sequence[int]) -> dict[int, dict[str, Any]]:
    """image id → alias, reference, digest, backend, components (the image table is small)."""
    if not ids:
        return {}
    q = select(
        Image.id, Image.alias, Image.reference, Image.digest, Image.backend, Image.components
    )
    return {r.id: dict(r._mapping) for r in conn.execute(q.where(Image.id.in_(sorted(set(ids)))))}


def hosts_of(conn: Connection | Session, ids: Sequence[int]) -> dict[int, dict[str, Any]]:
    """host id → name, spec (GPUs: the host class)."""
    if not ids:
        return {}
    q = select(Host.id, Host.name, Host.spec).where(Host.id.in_(sorted(set(ids))))
    return {r.id: dict(r._mapping) for r in conn.execute(q)}


#: (run id, its task's suite, check id, check version, feature, kind, attempt, status, message,
#: device, library): one attempt as attempts_of reads it
AttemptRow = tuple[str, str | None, str, int, str, str, int, str, str, str | None, str | None]


@dataclass(frozen=True)
class PlanRow:
    run_id: str
    suite: str
    filtered: bool  # a check filter narrowed the suite (SuiteRef.checks)
    state: str


def plans_of(conn: Connection | Session, run_ids: Sequence[str]) -> list[PlanRow]:
    out: list[PlanRow] = []
    for part in queries.chunks(run_ids):
        q = (
            select(TaskRow.run_id, TaskRow.suite, TaskRow.suite_spec, TaskRow.state)
            .where(TaskRow.run_id.in_(part))
            .order_by(TaskRow.id)  # the job's suite order: tasks are queued in it
        )
        out.extend(
            PlanRow(r.run_id, r.suite, bool((r.suite_spec or {}).get("checks")), r.state)
            for r in conn.execute(q)
        )
    return out


def attempts_of(conn: Connection | Session, run_ids: Sequence[str]) -> list[AttemptRow]:
    """Every attempt of these runs, in storage order, as tuples (run id, its task's suite, check
    id, check version, feature, kind, attempt, status, message, device, library): without its
    log, metrics or samples, and without an object per row."""
    out: list[AttemptRow] = []
    for part in queries.chunks(run_ids):
        q = (
            select(
                Result.run_id,
                TaskRow.suite,
                *(tables.check.c[n] for n in ("check_id", "version", "feature", "kind")),
                *(
                    tables.result.c[n]
                    for n in ("attempt", "status", "message", "device", "library")
                ),
            )
            .join_from(tables.result, tables.check, Check.id == Result.check_pk)
            .outerjoin(tables.task, TaskRow.id == Result.task_id)
            .where(Result.run_id.in_(part))
            .order_by(Result.id)
        )
        out.extend(conn.execute(q))  # rows unpack as tuples
    return out


def found_values(
    conn: Connection | Session, run_ids: Sequence[str], prefix: str
) -> dict[tuple[str, str], str]:
    """(run id, check id) → the value a check measured (its metrics' ``found``), for the checks
    whose id starts with ``prefix`` (version rows: a few per run, never every result's metrics)."""
    out: dict[tuple[str, str], str] = {}
    for part in queries.chunks(run_ids):
        q = (
            select(Result.run_id, Check.check_id, Result.metrics)
            .join_from(tables.result, tables.check, Check.id == Result.check_pk)
            .where(
                Result.run_id.in_(part),
                Check.check_id.like(prefix.replace("_", "\\_") + "%", escape="\\"),
            )
        )
        for run_id, check, metrics in conn.execute(q):
            found = (metrics or {}).get("found") if isinstance(metrics, dict) else None
            if isinstance(found, (str, int, float)) and str(found).strip():
                out[(run_id, check)] = str(found).strip()[:60]
    return out


def ended_of(conn: Connection | Session, run_ids: Sequence[str]) -> list[datetime]:
    if not run_ids:
        return []
    return [e for e in conn.scalars(select(Run.ended).where(Run.id.in_(run_ids))) if e is not None]


def aliases_of_job(conn: Connection | Session, job: str) -> list[str]:
    """The image aliases the stored runs of ``job`` ran, in the order first run."""
    q = (
        select(Image.alias, func.min(Run.started))
        .join_from(tables.image, tables.run, Run.image_id == Image.id)
        .where(Run.job == job)
        .group_by(Image.alias)
        .order_by(func.min(Run.started), Image.alias)
    )
    return [alias for alias, _ in conn.execute(q)]


def _inventories(
    conn: Connection | Session,
) -> list[tuple[str, str, str | None, str, dict[str, str]]]:
    """Every inventoried run, oldest first: (run id, its image's alias, digest, reference,
    component → value)."""
    q = (
        select(Run.id, Image.alias, Image.digest, Image.reference)
        .join_from(tables.run, tables.image, Run.image_id == Image.id)
        .where(Run.id.in_(select(InventoryRow.run_id)))
        .order_by(Run.started, Run.id)
    )
    runs = conn.execute(q).all()
    values: dict[str, dict[str, str]] = {}
    rows = select(InventoryRow.run_id, InventoryRow.component, InventoryRow.value)
    for run_id, component, value in conn.execute(rows.order_by(InventoryRow.id)):
        values.setdefault(run_id, {})[component] = value
    return [(r, alias, digest, ref, values.get(r, {})) for r, alias, digest, ref in runs]


def newest_components_by_image(conn: Connection | Session) -> dict[str, tuple[str, dict[str, str]]]:
    """Every image at once: alias → (run id, component → value) of its newest run that has an
    inventory (the matrix's components layout). One image's whole Inventory:
    ``inventory_queries.newest_inventory_of``."""
    return {alias: (run_id, found) for run_id, alias, _d, _r, found in _inventories(conn)}


def newest_components_by_digest(
    conn: Connection | Session,
) -> dict[str, tuple[str, dict[str, str]]]:
    """Image digest, and image reference, → (run id, component → value) of its newest
    inventoried run: an image audited under another alias of the same digest (or of the same
    reference: a local image, which the catalog pins by no digest) has that inventory too."""
    out: dict[str, tuple[str, dict[str, str]]] = {}
    for run_id, _alias, digest, reference, found in _inventories(conn):
        for key in (digest, reference):
            if key:
                out[key] = (run_id, found)
    return out


def broken_imports(conn: Connection | Session) -> dict[str, dict[str, str]]:
    """Run id → component → its import error, for the packages an inventory found installed
    but failing to import (audit.import_findings): never shown as a version that works."""
    out: dict[str, dict[str, str]] = {}
    q = select(InventoryRow.run_id, InventoryRow.component, InventoryRow.extra).where(
        cast(InventoryRow.extra, Text).like('%"import_error"%')
    )
    for run_id, comp, extra in conn.execute(q):
        error = (extra or {}).get("import_error")
        if error:
            out.setdefault(run_id, {})[comp] = str(error)
    return out


def publish(
    session: Session,
    version: str,
    doc: dict[str, Any],
    published: datetime,
    last_verified: datetime,
) -> None:
    """Store a document as an immutable version: one matrix_cell per table cell, the
    layout (headers, row order and labels, notes, header) in matrix_version.meta."""
    if session.scalars(select(Version.id).where(Version.version == version)).first() is not None:
        raise VersionExistsError(version)
    meta = {k: v for k, v in doc.items() if k != "rows"}
    meta["rows"] = [{"key": r["key"], "labels": r["labels"]} for r in doc["rows"]]
    source = "\n".join(doc["source_of_truth"])
    q = insert(tables.matrix_version).returning(Version.id)
    mv = session.execute(
        q.values(
            version=version,
            published=published,
            last_verified=last_verified,
            source=source,
            meta=meta,
        )
    ).scalar_one()
    cells = [
        {
            "matrix_id": mv,
            "row": r["key"],
            "column": col,
            "verdict": c["verdict"] or "",
            "statuses": c["statuses"],
            "runs": c["runs"],
            "meta": {
                "text": c["text"],
                "note": c["note"],
                "when": c.get("when", ""),
                "flags": list(c.get("flags", ())),
            },
        }
        for r in doc["rows"]
        for col, c in r["cells"].items()
    ]
    if cells:
        session.execute(insert(tables.matrix_cell), cells)


def load(conn: Connection | Session, version: str) -> dict[str, Any] | None:
    """The document a version was published with (Document.to_dict form)."""
    mv = conn.execute(select(Version.id, Version.meta).where(Version.version == version)).first()
    if mv is None:
        return None
    q = select(Cell.row, Cell.column, Cell.verdict, Cell.statuses, Cell.runs, Cell.meta)
    cells = {(c.row, c.column): c for c in conn.execute(q.where(Cell.matrix_id == mv.id))}
    doc = {k: v for k, v in mv.meta.items() if k != "rows"}
    doc["rows"] = [
        {
            "key": r["key"],
            "labels": r["labels"],
            "cells": {
                col: {
                    "text": cells[(r["key"], col)].meta["text"],
                    "verdict": cells[(r["key"], col)].verdict,
                    "statuses": cells[(r["key"], col)].statuses,
                    "runs": cells[(r["key"], col)].runs,
                    "note": cells[(r["key"], col)].meta["note"],
                    "when": cells[(r["key"], col)].meta.get("when", ""),
                    "flags": cells[(r["key"], col)].meta.get("flags", []),
                }
                for col in doc["columns"]
            },
        }
        for r in mv.meta["rows"]
    ]
    return doc


def versions(conn: Connection | Session) -> list[Row[Any]]:
    """Every published version (version, published, last_verified, meta, and how many
    cells), oldest first."""
    cells = select(func.count()).where(Cell.matrix_id == Version.id).scalar_subquery()
    q = select(
        Version.version, Version.published, Version.last_verified, Version.meta, cells.label("n")
    )
    return list(conn.execute(q.order_by(Version.published, Version.id)))
