"""The reads a command makes before anything else (``results list``, ``results show``, the
run plan's history): SQLAlchemy Core selects on the tables of store/tables.py, run on a
connection (or session) the caller opened, any store.

Why Core and nothing else: the ORM (store/models.py and ``sqlalchemy.orm``) costs a read-only
command about a third more start-up than Core alone, and only the writers need it. An
earlier second path on the standard library's sqlite3 (and a cache of the listings' rows)
saved at most a tenth of a second and doubled what a reader had to keep equal: it went
(bench/bench_reads.py measures the start-up, docs/benchmarks.md has the figures).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, NamedTuple

from sqlalchemy import Row, Select, exists, or_, select

from . import tables

if TYPE_CHECKING:
    from sqlalchemy.engine import Connection
    from sqlalchemy.orm import Session


class RunLine(NamedTuple):
    """A listed run (``list_runs``): its row with its image's alias and digest and its
    host's name."""

    id: str
    started: datetime
    job: str
    state: str
    image: str
    digest: str | None
    host: str


@dataclass(frozen=True)
class Listing:
    """Which runs ``results list`` shows: the newest ``limit`` (ties in start time broken by
    id), of ``image`` (alias or reference), ``job``, in one of ``states``, started at or
    after ``since``; each filter only when given."""

    limit: int = 50
    image: str | None = None
    job: str | None = None
    states: tuple[str, ...] = ()
    since: datetime | None = None

    def select(self) -> Select[Any]:
        """The listed runs' columns (``RunLine``), newest first."""
        run, img, hst = tables.run.c, tables.image.c, tables.host.c
        q = (
            select(run.id, run.started, run.job, run.state, img.alias, img.digest, hst.name)
            .join_from(tables.run, tables.image, run.image_id == img.id)
            .join(tables.host, run.host_id == hst.id)
        )
        if self.image is not None:
            q = q.where(or_(img.alias == self.image, img.reference == self.image))
        if self.job is not None:
            q = q.where(run.job == self.job)
        if self.states:
            q = q.where(run.state.in_(self.states))
        if self.since is not None:
            q = q.where(run.started >= self.since)
        return q.order_by(run.started.desc(), run.id.desc()).limit(self.limit)

    def ids(self) -> Select[Any]:
        listed = self.select().subquery("listed")
        return select(listed.c.id)


def list_runs(conn: Connection, listing: Listing) -> list[RunLine]:
    """The runs ``listing`` names, newest first."""
    return [RunLine._make(row) for row in conn.execute(listing.select())]


def listed_statuses(conn: Connection, listing: Listing) -> list[tuple[str, str, int, str]]:
    """(run id, check id, attempt, status) of every result of the runs ``listing`` names,
    attempts in order: one statement, not one per run."""
    res, chk = tables.result.c, tables.check.c
    q = (
        select(res.run_id, chk.check_id, res.attempt, res.status)
        .join_from(tables.result, tables.check, chk.id == res.check_pk)
        .where(res.run_id.in_(listing.ids()))
        .order_by(res.run_id, chk.check_id, res.attempt, res.id)
    )
    return [(r[0], r[1], r[2], r[3]) for r in conn.execute(q)]


def running_metas(conn: Connection, listing: Listing) -> dict[str, Any]:
    """The meta (its owner label: ``executors/owner.me``) of each listed run that is still
    ``running``: a run whose owner died is abandoned."""
    run = tables.run.c
    q = select(run.id, run.meta).where(run.id.in_(listing.ids()), run.state == "running")
    return dict(conn.execute(q).all())


def suite_durations(conn: Connection, limit: int = 500) -> dict[tuple[str, str], float]:
    """The last measured duration of each (image alias, suite), for placement and ETAs: the
    run's plan reads it before its first container starts."""
    task, run, img = tables.task.c, tables.run.c, tables.image.c
    q = (
        select(img.alias, task.suite, task.timings)
        .join_from(tables.task, tables.run, task.run_id == run.id)
        .join(tables.image, run.image_id == img.id)
        .where(task.state == "done")
        .order_by(task.id.desc())
        .limit(limit)
    )
    out: dict[tuple[str, str], float] = {}
    for alias, suite, timings in conn.execute(q):
        total = (timings or {}).get("total_s")
        if total and (alias, suite) not in out:
            out[(alias, suite)] = float(total)
    return out


@dataclass(frozen=True)
class Shown:
    """One stored run as ``results show`` and ``valorch run --json`` print it: the run's row
    with its image's alias, reference, digest and backend and its host's name; every attempt
    of every check, with the check's columns (``row_library``: the library its seed row is
    about), in storage order; and each suite's timings."""

    run: Row[Any]
    results: list[Row[Any]]
    timings: dict[str, Any]


def shown(conn: Connection | Session, run_id: str) -> Shown | None:
    """The run ``run_id`` names (or the one run whose id starts with it, 4 characters or
    more), or None."""
    run, img, hst, res, chk = (t.c for t in (tables.run, tables.image, tables.host,
                                             tables.result, tables.check))  # fmt: skip
    q: Select[Any] = (
        select(
            *(run[c] for c in ("id", "batch", "job", "state", "meta", "executor")),
            *(run[c] for c in ("valorch_version", "spec_hash", "cpu_only", "started", "ended")),
            *(run.origin, img.alias, img.reference, img.digest, img.backend, hst.name),
        )
        .join_from(tables.run, tables.image, run.image_id == img.id)
        .join(tables.host, run.host_id == hst.id)
    )
    found = conn.execute(q.where(run.id == run_id)).first()
    if found is None and len(run_id) >= 4:
        matches = conn.execute(q.where(run.id.like(f"{run_id}%")).limit(2)).all()
        found = matches[0] if len(matches) == 1 else None
    if found is None:
        return None
    attempts = (
        select(chk.check_id, chk.version, chk.feature, chk.library.label("row_library"), chk.kind)
        .add_columns(res.library, res.device, res.attempt, res.status, res.duration_s)
        .add_columns(res.message, res.metrics, res.samples)
        .join_from(tables.result, tables.check, chk.id == res.check_pk)
        .where(res.run_id == found.id)
        .order_by(res.id)
    )
    task = tables.task.c
    suites = select(task.suite, task.timings).where(task.run_id == found.id).order_by(task.id)
    return Shown(found, list(conn.execute(attempts)), dict(conn.execute(suites).all()))


def node_hosts(host: str, meta: Any) -> list[str]:
    """Every host a run ran on: its own (``host``), then the other nodes of its multi-node
    tasks (the nodes each task's entry in the run's ``meta`` lists, executors/gang.merge),
    each once, in rank order."""
    names = [host]
    for entry in (meta or {}).values():
        probe = entry.get("probe") if isinstance(entry, dict) else None
        nodes = probe.get("nodes") if isinstance(probe, dict) else None
        for node in nodes if isinstance(nodes, list) else ():
            name = node.get("host") if isinstance(node, dict) else None
            if isinstance(name, str) and name not in names:
                names.append(name)
    return names


def baselines(conn: Connection) -> list[tuple[str, str | None, str | None, datetime]]:
    """Every named baseline (name, run id, matrix version, when it was set), by name."""
    b = tables.baseline.c
    q = select(b.name, b.run_id, b.matrix_version, b.created).order_by(b.name)
    return [(n, r, v, c) for n, r, v, c in conn.execute(q)]


def inventory_runs(conn: Connection, image: str | None, limit: int) -> list[Row[Any]]:
    """The runs that hold an inventory (id, alias, reference, digest, job, started), newest
    first; of ``image`` (alias or reference) when given."""
    run, img, inv = tables.run.c, tables.image.c, tables.inventory.c
    q: Select[Any] = (
        select(run.id, img.alias, img.reference, img.digest, run.job, run.started)
        .join_from(tables.run, tables.image, run.image_id == img.id)
        .where(exists().where(inv.run_id == run.id))
    )
    if image:
        q = q.where(or_(img.alias == image, img.reference == image))
    return list(conn.execute(q.order_by(run.started.desc()).limit(limit)))


def acceptances(conn: Connection | Session) -> list[Row[Any]]:
    """Every stored waiver (``valorch accept``), revoked ones too, newest last day first."""
    acc = tables.acceptance.c
    return list(conn.execute(select(tables.acceptance).order_by(acc.until.desc(), acc.id.desc())))
