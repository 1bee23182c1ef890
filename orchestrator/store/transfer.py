"""Moving runs between databases: export to a schema-versioned JSON document,
import it idempotently. Rows are matched by natural keys (run uuid, image
reference/digest/alias, host fingerprint, check id/version, (run, suite),
(run, check, attempt), (run, component)), never by the source's integer ids."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from . import export_schema, queries
from .blobs import finite, finite_numbers
from .models import Check, Host, InventoryRow, Result, Run, TaskRow

FORMAT = "valorch-results"
SCHEMA = 1


#: the columns a document copies as they are, in the document's order
IMAGE_FIELDS = ("alias", "reference", "digest", "backend", "family", "components")
CHECK_FIELDS = ("check_id", "version", "feature", "kind", "library", "unit", "bigger_is_better")
INVENTORY_FIELDS = ("component", "value", "source", "evidence", "extra")


class TransferError(ValueError):
    """The document is not a valorch results export this version can read."""


def _dt(value: datetime | None) -> str | None:
    return value.isoformat() if value else None


def _parse_dt(value: str | None) -> datetime | None:
    """A validated timestamp (export_schema: in range) as the store keeps it: naive UTC."""
    if not value:
        return None
    return datetime.fromisoformat(export_schema.utc_text(value, datetime.fromisoformat(value)))


def export_runs(session: Session, runs: Sequence[Run]) -> dict[str, Any]:
    """``runs`` with their images, hosts, checks, tasks, results and inventory (FORMAT)."""
    images: dict[int, dict[str, Any]] = {}
    hosts: dict[int, dict[str, Any]] = {}
    checks: dict[int, dict[str, Any]] = {}
    out_runs, tasks, results, inventory = [], [], [], []
    for run in runs:
        images.setdefault(run.image.id, _fields(run.image, *IMAGE_FIELDS))
        hosts.setdefault(run.host.id, _host_doc(run.host))
        out_runs.append(_run_doc(run))
        tasks += [_task_doc(run, t) for t in run.tasks]
        suite_of: dict[int | None, str] = {t.id: t.suite for t in run.tasks}
        for r in session.scalars(
            select(Result).where(Result.run_id == run.id).order_by(Result.id)
        ).unique():
            checks.setdefault(r.check.id, _fields(r.check, *CHECK_FIELDS))
            results.append(_result_doc(run, r, suite_of.get(r.task_id)))
        inventory += [
            {"run": run.id, **_fields(inv, *INVENTORY_FIELDS)}
            for inv in session.scalars(
                select(InventoryRow).where(InventoryRow.run_id == run.id).order_by(InventoryRow.id)
            )
        ]
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


def _fields(row: Any, *names: str) -> dict[str, Any]:
    """The named columns of a row as a document's keys, in that order."""
    return {name: getattr(row, name) for name in names}


def _host_doc(host: Host) -> dict[str, Any]:
    return {"name": host.name, "fingerprint": host.fingerprint, "spec": finite(host.spec)}


def _run_doc(run: Run) -> dict[str, Any]:
    img = run.image
    return {
        "id": run.id,
        "batch": run.batch,
        "job": run.job,
        "image": [img.reference, img.digest, img.alias],
        "host": run.host.fingerprint,
        "executor": run.executor,
        "valorch_version": run.valorch_version,
        "spec_hash": run.spec_hash,
        "cpu_only": run.cpu_only,
        "started": _dt(run.started),
        "ended": _dt(run.ended),
        "state": run.state,
        "meta": finite(run.meta),
    }


def _task_doc(run: Run, t: TaskRow) -> dict[str, Any]:
    return {
        "run": run.id,
        "suite": t.suite,
        "suite_spec": t.suite_spec,
        "state": t.state,
        "tries": t.tries,
        "started": _dt(t.started),
        "ended": _dt(t.ended),
        "timings": finite_numbers(t.timings),
        "error": t.error,
    }


def _result_doc(run: Run, r: Result, suite: str | None) -> dict[str, Any]:
    return {
        "run": run.id,
        "suite": suite,
        "check": [r.check.check_id, r.check.version],
        "attempt": r.attempt,
        "status": r.status,
        "duration_s": r.duration_s,
        "message": r.message,
        "log": r.log,
        "metrics": finite(r.metrics),  # a store written before NaN was encoded
        "samples": finite_numbers(r.samples),
        "device": r.device,
        "library": r.library,
        "definition": r.definition,
    }


def _host(session: Session, d: dict[str, Any]) -> Host:
    values = {"name": d["name"], "fingerprint": d["fingerprint"], "spec": d.get("spec") or {}}
    return queries.found_or_inserted(session, Host, values, "fingerprint")


def _check(session: Session, d: dict[str, Any]) -> Check:
    values = {
        "check_id": d["check_id"],
        "version": d["version"],
        "feature": d.get("feature", ""),
        "kind": d.get("kind", "feature"),
        "library": d.get("library"),
        "unit": d.get("unit"),
        "bigger_is_better": bool(d.get("bigger_is_better")),
    }
    return queries.found_or_inserted(session, Check, values, "check_id", "version")


def validate_export(doc: Any) -> None:
    """Refuse a document that is not, in every field, what export_runs writes (export_schema)."""
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise TransferError('not a valorch results export (no "format": "valorch-results")')
    if doc.get("schema") != SCHEMA:
        raise TransferError(
            f"results export schema {doc.get('schema')!r}; this valorch reads schema {SCHEMA}"
        )
    found = export_schema.problems(doc)
    if found:
        raise TransferError("; ".join(found))


def import_runs(session: Session, doc: Any, source: str) -> dict[str, int]:
    """Add what is not there yet; returns counts of new rows per kind. The whole document
    is validated first: a bad one adds nothing. Every run added keeps where it came from
    (``run.origin``: ``import:`` and ``source``): a record of another store, shown as
    such and never resumed here."""
    validate_export(doc)
    try:
        return _import(session, doc, queries.imported_origin(source))
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
    images = {(d["reference"], d.get("digest"), d["alias"]): d for d in doc["images"]}
    hosts = {d["fingerprint"]: d for d in doc["hosts"]}
    added = 0
    for d in doc["runs"]:
        if session.get(Run, d["id"]) is not None:
            continue
        # the optional keys an export may leave out, then the image as the document has it
        image = {"digest": None, "family": "", "components": {}, **images[tuple(d["image"])]}
        host = _host(session, hosts[d["host"]])
        session.add(
            Run(
                id=d["id"],
                batch=d["batch"],
                job=d["job"],
                image_id=queries.image_pk(session, image),
                host_id=host.id,
                executor=d["executor"],
                valorch_version=d["valorch_version"],
                spec_hash=d["spec_hash"],
                cpu_only=bool(d["cpu_only"]),
                started=_parse_dt(d["started"]),
                ended=_parse_dt(d["ended"]),
                state=d["state"],
                meta=d.get("meta") or {},
                origin=origin,
            )
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
            row = TaskRow(
                run_id=d["run"],
                suite=d["suite"],
                suite_spec=d["suite_spec"],
                state=d["state"],
                tries=d.get("tries", 0),
                started=_parse_dt(d.get("started")),
                ended=_parse_dt(d.get("ended")),
                timings=d.get("timings") or {},
                error=d.get("error"),
            )
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
            check_rows[key] = _check(session, checks[key])
        chk = check_rows[key]
        exists = session.scalars(
            select(Result.id).where(
                Result.run_id == d["run"], Result.check_pk == chk.id, Result.attempt == d["attempt"]
            )
        ).first()
        if exists is not None:
            continue
        session.add(
            Result(
                run_id=d["run"],
                task_id=task_ids.get((d["run"], d.get("suite"))),
                check_pk=chk.id,
                attempt=d["attempt"],
                status=d["status"],
                duration_s=d.get("duration_s", 0.0),
                message=d.get("message", ""),
                log=d.get("log", ""),
                metrics=d.get("metrics") or {},
                samples=d.get("samples") or [],
                device=d.get("device"),
                library=d.get("library"),
                definition=d.get("definition"),
            )
        )
        added += 1
    return added


def _import_inventory(session: Session, inventory: list[dict[str, Any]]) -> int:
    added = 0
    for d in inventory:
        exists = session.scalars(
            select(InventoryRow.id).where(
                InventoryRow.run_id == d["run"], InventoryRow.component == d["component"]
            )
        ).first()
        if exists is None:
            session.add(
                InventoryRow(
                    run_id=d["run"],
                    component=d["component"],
                    value=d["value"],
                    source=d["source"],
                    evidence=d.get("evidence", ""),
                    extra=d.get("extra") or {},
                )
            )
            added += 1
    return added
