"""Moving runs between databases: export to a schema-versioned JSON document,
import it idempotently. Rows are matched by natural keys (run uuid, image
reference/digest/alias, host fingerprint, check id/version, (run, suite),
(run, check, attempt), (run, component)), never by the source's integer ids."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from pydantic import ValidationError
from sqlalchemy import insert, select
from sqlalchemy.orm import Session

from . import export_schema, push, queries, tables
from .blobs import finite
from .models import Check, Host, Result, Run, TaskRow

FORMAT = "valorch-results"
SCHEMA = 1


class TransferError(ValueError):
    """The document is not a valorch results export this version can read."""


def _doc(row: dict[str, Any]) -> dict[str, Any]:
    """A row of push.Source as a document writes it: times as ISO 8601 text."""
    return {k: v.isoformat() if isinstance(v, datetime) else v for k, v in row.items()}


def _row(d: dict[str, Any], *drop: str) -> dict[str, Any]:
    """An entry of a validated document (validate_export) as its row's columns: ``drop``
    left out, the times (UTC text) as the store keeps them."""
    times = ("started", "ended")
    return {
        k: datetime.fromisoformat(v) if k in times and v else v
        for k, v in d.items()
        if k not in drop
    }


def export_runs(session: Session, runs: Sequence[Run]) -> dict[str, Any]:
    """``runs`` with their images, hosts, checks, tasks, results and inventory (FORMAT),
    each run read as push reads it (push.Source)."""
    source = push.Source()
    images: dict[tuple[str, str | None, str], dict[str, Any]] = {}
    hosts: dict[str, dict[str, Any]] = {}
    checks: dict[tuple[str, int], dict[str, Any]] = {}
    out_runs, tasks, results, inventory = [], [], [], []
    for run in runs:
        b = source.read(session, run.id)
        image = (b.image["reference"], b.image["digest"], b.image["alias"])
        images.setdefault(image, b.image)
        hosts.setdefault(b.host["fingerprint"], {**b.host, "spec": finite(b.host["spec"])})
        for key, check in b.checks.items():
            checks.setdefault(key, check)
        row = _doc(b.run)  # its id, batch and job, where it ran, then the rest
        doc = {k: row.pop(k) for k in ("id", "batch", "job")}
        doc.update(image=list(image), host=b.host["fingerprint"])
        out_runs.append(doc | {k: v for k, v in row.items() if k not in ("origin", "pruned")})
        tasks += [{"run": run.id, **_doc(t)} for t in b.tasks]
        for r in b.results:
            head = {"run": run.id, "suite": r.pop("suite"), "check": list(r.pop("check"))}
            results.append({**head, **r})
        inventory += [{"run": run.id, **i} for i in b.inventory]
    return {
        "format": FORMAT,
        "schema": SCHEMA,
        "images": list(images.values()),
        "hosts": list(hosts.values()),
        "checks": list(checks.values()),
        "runs": out_runs,
        "tasks": tasks,
        "results": results,
        "inventory": inventory,
    }


def validate_export(doc: Any) -> dict[str, Any]:
    """Refuse a document that is not, in every field, what export_runs writes (export_schema);
    the document as validated: every optional key filled in, every time in UTC."""
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise TransferError('not a valorch results export (no "format": "valorch-results")')
    if doc.get("schema") != SCHEMA:
        raise TransferError(
            f"results export schema {doc.get('schema')!r}; this valorch reads schema {SCHEMA}"
        )
    try:
        return export_schema.ExportDocument.model_validate(doc).model_dump(by_alias=True)
    except ValidationError:
        raise TransferError("; ".join(export_schema.problems(doc))) from None


def import_runs(session: Session, doc: Any, source: str) -> dict[str, int]:
    """Add what is not there yet; returns counts of new rows per kind. The whole document
    is validated first: a bad one adds nothing. Every run added keeps where it came from
    (``run.origin``: ``import:`` and ``source``): a record of another store, shown as
    such and never resumed here."""
    valid = validate_export(doc)
    try:
        return _import(session, valid, queries.imported_origin(source))
    except (KeyError, TypeError, ValueError) as exc:
        raise TransferError(f"malformed results export: {type(exc).__name__}: {exc}") from None


def _import(session: Session, doc: dict[str, Any], origin: str) -> dict[str, int]:
    runs = _import_runs(session, doc, origin)
    task_ids, tasks = _import_tasks(session, doc["tasks"])
    results = _import_results(session, doc, task_ids)
    inventory = _import_inventory(session, doc["inventory"])
    session.flush()
    return {"runs": runs, "tasks": tasks, "results": results, "inventory": inventory}


def _import_runs(session: Session, doc: dict[str, Any], origin: str) -> int:
    images = {(d["reference"], d["digest"], d["alias"]): d for d in doc["images"]}
    hosts = {d["fingerprint"]: d for d in doc["hosts"]}
    added = 0
    for d in doc["runs"]:
        if session.get(Run, d["id"]) is not None:
            continue
        host = queries.found_or_inserted(session, Host, hosts[d["host"]], "fingerprint")
        image_id = queries.image_pk(session, images[tuple(d["image"])])
        session.add(
            Run(**_row(d, "image", "host"), image_id=image_id, host_id=host.id, origin=origin)
        )
        added += 1
    session.flush()
    return added


def _import_tasks(
    session: Session, tasks: list[dict[str, Any]]
) -> tuple[dict[tuple[str, str], int], int]:
    """The task ids by (run, suite), and how many tasks were added."""
    task_ids: dict[tuple[str, str], int] = {}
    added = 0
    for d in tasks:
        row = session.scalars(
            select(TaskRow).where(TaskRow.run_id == d["run"], TaskRow.suite == d["suite"])
        ).first()
        if row is None:
            row = TaskRow(run_id=d["run"], **_row(d, "run"))
            session.add(row)
            session.flush()
            added += 1
        task_ids[(d["run"], d["suite"])] = row.id
    return task_ids, added


def _import_results(
    session: Session, doc: dict[str, Any], task_ids: dict[tuple[str, str], int]
) -> int:
    checks = {(d["check_id"], d["version"]): d for d in doc["checks"]}
    check_rows: dict[tuple[str, int], Check] = {}
    added = 0
    for d in doc["results"]:
        key = tuple(d["check"])
        if key not in check_rows:
            check_rows[key] = queries.found_or_inserted(
                session, Check, checks[key], "check_id", "version"
            )
        chk = check_rows[key]
        exists = session.scalars(
            select(Result.id).where(
                Result.run_id == d["run"], Result.check_pk == chk.id, Result.attempt == d["attempt"]
            )
        ).first()
        if exists is not None:
            continue
        task_id = task_ids.get((d["run"], d["suite"]))
        row = _row(d, "run", "suite", "check")
        session.add(Result(run_id=d["run"], task_id=task_id, check_pk=chk.id, **row))
        added += 1
    return added


def _import_inventory(session: Session, inventory: list[dict[str, Any]]) -> int:
    inv, added = tables.inventory, 0
    for d in inventory:
        q = select(inv.c.id).where(inv.c.run_id == d["run"], inv.c.component == d["component"])
        if session.scalars(q).first() is None:
            session.execute(insert(inv).values(run_id=d["run"], **_row(d, "run")))
            added += 1
    return added
