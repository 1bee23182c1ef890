"""Copying whole runs from one store to another (`valorch results push`).

A run is read from the source as one bundle (run, image, host, tasks, results with
their checks, inventory) and written to the target in the caller's transaction, so
that a run lands whole or not at all. Rows are matched by natural keys (run uuid,
image reference/digest/alias, host fingerprint, check id/version); the source's
integer ids never travel. Columns are copied generically from the models, so a
column added by a later migration travels without a change here.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, Table, func, insert, select
from sqlalchemy.orm import Session

from . import bulk, queries, tables
from .blobs import finite, finite_numbers
from .models import Host

Run, Result = tables.run.c, tables.result.c

# columns that are ids of the source database, remapped on the target
_LOCAL = {"id", "run_id", "task_id", "check_pk", "image_id", "host_id"}


@dataclass
class Bundle:
    """One run and everything that hangs off it, without the source's ids."""

    run: dict[str, Any]
    image: dict[str, Any]
    host: dict[str, Any]
    tasks: list[dict[str, Any]]
    checks: dict[tuple[str, int], dict[str, Any]]
    # "check": (id, version), "suite": name | None
    results: list[dict[str, Any]] = field(default_factory=list)
    inventory: list[dict[str, Any]] = field(default_factory=list)


def finished_run_ids(session: Session, since: datetime | None = None) -> tuple[list[str], int]:
    """Ids of the finished runs to send, oldest first, and how many runs are left out
    because they are still running or were interrupted (`valorch run --resume` ends them)."""
    q = select(Run.id, Run.state).order_by(Run.started, Run.id)
    if since is not None:
        q = q.where(Run.started >= since)
    ids, unfinished = [], 0
    for run_id, state in session.execute(q):
        if state in queries.FINISHED:
            ids.append(run_id)
        else:
            unfinished += 1
    return ids, unfinished


def present(session: Session, run_ids: list[str]) -> set[str]:
    """Which of these run ids this database holds."""
    found: set[str] = set()
    for part in queries.chunks(run_ids):
        found.update(session.scalars(select(Run.id).where(Run.id.in_(part))))
    return found


class Source:
    """Reads runs from the source store; images, hosts and checks are read once per push."""

    def __init__(self) -> None:
        self.images: dict[int, dict[str, Any]] = {}
        self.hosts: dict[int, dict[str, Any]] = {}
        self.checks: dict[int, dict[str, Any]] = {}

    @staticmethod
    def _rows(
        session: Session, table: Table, where: ColumnElement[bool], skip: Iterable[str] = _LOCAL
    ) -> list[dict[str, Any]]:
        """Rows as dicts of the columns not in ``skip``, cheaply: no per-row column lookups."""
        cols = [c for c in table.columns if c.name not in set(skip)]
        names = [c.name for c in cols]
        return [
            dict(zip(names, row, strict=True))
            for row in session.execute(select(*cols).where(where).order_by(table.c.id))
        ]

    def read(self, session: Session, run_id: str) -> Bundle:
        rt, it, ht, tt = tables.run, tables.image, tables.host, tables.task
        ct, res, inv = tables.check, tables.result, tables.inventory
        found = self._rows(session, rt, rt.c.id == run_id, ())
        if not found:
            raise KeyError(run_id)
        run = found[0]
        image_pk, host_pk = run.pop("image_id"), run.pop("host_id")
        for cache, table, pk in ((self.images, it, image_pk), (self.hosts, ht, host_pk)):
            if pk not in cache:
                (cache[pk],) = self._rows(session, table, table.c.id == pk)
        run["meta"] = finite(run["meta"])  # JSON has no NaN (a store written before it was encoded)
        bundle = Bundle(
            run=run, image=self.images[image_pk], host=self.hosts[host_pk], tasks=[], checks={}
        )
        suites: dict[int, str] = {}
        for t in self._rows(session, tt, tt.c.run_id == run_id, _LOCAL - {"id"}):
            suites[t.pop("id")] = t["suite"]
            t["timings"] = finite_numbers(t["timings"])
            bundle.tasks.append(t)
        results = self._rows(session, res, res.c.run_id == run_id, {"id", "run_id"})
        unknown = {r["check_pk"] for r in results} - set(self.checks)
        if unknown:
            for c in self._rows(session, ct, ct.c.id.in_(sorted(unknown)), ()):
                self.checks[c.pop("id")] = c
        for r in results:
            c = self.checks[r.pop("check_pk")]
            bundle.checks.setdefault((c["check_id"], c["version"]), c)
            r["check"], r["suite"] = (c["check_id"], c["version"]), suites.get(r.pop("task_id"))
            r["metrics"], r["samples"] = finite(r["metrics"]), finite_numbers(r["samples"])
            bundle.results.append(r)
        bundle.inventory = self._rows(session, inv, inv.c.run_id == run_id)
        return bundle


class Keys:
    """The target's ids of images, hosts and checks already seen in this push."""

    def __init__(self) -> None:
        self.images: dict[tuple[str, str | None, str], int] = {}
        self.hosts: dict[str, int] = {}
        self.checks: dict[tuple[str, int], int] = {}

    def forget(self) -> None:
        """After a rollback: rows inserted in it are gone."""
        self.images.clear()
        self.hosts.clear()
        self.checks.clear()


def write(session: Session, bundle: Bundle, origin: str | None, keys: Keys) -> int:
    """Insert the run and its rows; returns the number of results. A run id that is
    there already raises IntegrityError at the run insert (the caller rolls back)."""
    img = bundle.image
    ikey = (img["reference"], img["digest"], img["alias"])
    if ikey not in keys.images:
        keys.images[ikey] = queries.image_pk(session, img)
    hkey = bundle.host["fingerprint"]
    if hkey not in keys.hosts:
        keys.hosts[hkey] = queries.found_or_inserted(session, Host, bundle.host, "fingerprint").id
    missing = [k for k in bundle.checks if k not in keys.checks]
    if missing:
        keys.checks.update(
            queries.check_pks(session, missing, {k: bundle.checks[k] for k in missing})
        )
    run = dict(bundle.run, image_id=keys.images[ikey], host_id=keys.hosts[hkey])
    if origin and not run.get("origin"):
        run["origin"] = origin
    session.execute(insert(tables.run), [run])
    task_ids: dict[str, int] = {}
    tt = tables.task
    for t in bundle.tasks:
        task_ids[t["suite"]] = session.execute(
            insert(tt).values(**t, run_id=run["id"]).returning(tt.c.id)
        ).scalar_one()
    rows = []
    for r in bundle.results:
        row = {k: v for k, v in r.items() if k not in ("check", "suite")}
        row.update(
            run_id=run["id"],
            task_id=task_ids.get(r["suite"]),
            check_pk=keys.checks[tuple(r["check"])],
        )
        rows.append(row)
    bulk.insert_rows(session, tables.result, rows)
    bulk.insert_rows(
        session, tables.inventory, [dict(i, run_id=run["id"]) for i in bundle.inventory]
    )
    return len(rows)


def result_counts(session: Session, run_ids: list[str]) -> dict[str, int]:
    """Results per run, for checking that a copy is whole."""
    out: dict[str, int] = {}
    for part in queries.chunks(run_ids):
        q = select(Result.run_id, func.count()).where(Result.run_id.in_(part))
        out.update((k, v) for k, v in session.execute(q.group_by(Result.run_id)))
    return out
