"""Moving runs between databases: export to a schema-versioned JSON document,
import it idempotently. Rows are matched by natural keys (run uuid, image
reference/digest/alias, host fingerprint, check id/version, (run, suite),
(run, check, attempt), (run, component)), never by the source's integer ids."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from pydantic import ValidationError
from sqlalchemy import Table, insert, select
from sqlalchemy.orm import Session

from . import export_schema, push, queries, tables
from .blobs import finite
from .models import Host, Run

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
    images = {(d["reference"], d["digest"], d["alias"]): d for d in doc["images"]}
    hosts = {d["fingerprint"]: d for d in doc["hosts"]}
    added = dict.fromkeys(("runs", "tasks", "results", "inventory"), 0)
    known = push.present(session, [d["id"] for d in doc["runs"]])
    for d in doc["runs"]:
        if d["id"] in known:
            continue
        host = queries.found_or_inserted(session, Host, hosts[d["host"]], "fingerprint")
        image_id = queries.image_pk(session, images[tuple(d["image"])])
        row = _row(d, "image", "host")
        session.execute(
            insert(tables.run).values(**row, image_id=image_id, host_id=host.id, origin=origin)
        )
        added["runs"] += 1
    task_ids: dict[tuple[str, str], int] = {}
    for d in doc["tasks"]:
        row = {"run_id": d["run"], **_row(d, "run")}
        task_ids[(d["run"], d["suite"])], new = _added(session, tables.task, row, "suite")
        added["tasks"] += new
    checks = {(d["check_id"], d["version"]): d for d in doc["checks"]}
    pks = queries.check_pks(session, [tuple(d["check"]) for d in doc["results"]], checks)
    for d in doc["results"]:
        row = _row(d, "run", "suite", "check")
        row.update(
            run_id=d["run"],
            task_id=task_ids.get((d["run"], d["suite"])),
            check_pk=pks[tuple(d["check"])],
        )
        added["results"] += _added(session, tables.result, row, "check_pk", "attempt")[1]
    for d in doc["inventory"]:
        row = {"run_id": d["run"], **_row(d, "run")}
        added["inventory"] += _added(session, tables.inventory, row, "component")[1]
    return added


def _added(session: Session, table: Table, row: dict[str, Any], *key: str) -> tuple[int, bool]:
    """The id of the row of ``table`` (of ``row``'s run) whose ``key`` columns hold what
    ``row`` says, and whether it was inserted now from ``row`` (there was none)."""
    q = select(table.c.id).where(*(table.c[k] == row[k] for k in ("run_id", *key)))
    found = session.scalars(q).first()
    if found is not None:
        return found, False
    return session.execute(insert(table).values(**row).returning(table.c.id)).scalar_one(), True
