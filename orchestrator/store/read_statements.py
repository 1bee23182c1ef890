"""The statements of ``store/reads.py``, on SQLAlchemy Core: the one place their SQL is
written. ``CoreReads`` runs them on a connection to any store; scripts/gen-compiled-reads.py
compiles them for SQLite into ``store/compiled_reads.py``, which ``store/sqlite_reads.py``
runs without SQLAlchemy."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlalchemy import Boolean, Integer, Select, String, bindparam, literal_column, or_, select

from . import tables
from .reads import STATE_SLOTS

if TYPE_CHECKING:
    from sqlalchemy.engine import Connection
    from sqlalchemy.orm import Session


def _runs_listed_ids() -> Select[Any]:
    """The listed runs' columns (see ``runs_listed``), every filter a bound parameter."""
    run, img, hst = tables.run.c, tables.image.c, tables.host.c
    image = bindparam("image", type_=String)
    job = bindparam("job", type_=String)
    since = bindparam("since", type_=run.started.type)
    slots = [bindparam(f"state_{i}", type_=String) for i in range(1, STATE_SLOTS + 1)]
    return (
        select(run.id, run.started, run.job, run.state, img.alias, img.digest, hst.name)
        .join_from(tables.run, tables.image, run.image_id == img.id)
        .join(tables.host, run.host_id == hst.id)
        .where(or_(image.is_(None), img.alias == image, img.reference == image))
        .where(or_(job.is_(None), run.job == job))
        .where(or_(bindparam("any_state", type_=Boolean), run.state.in_(slots)))
        .where(or_(since.is_(None), run.started >= since))
        .order_by(run.started.desc(), run.id.desc())
        .limit(bindparam("limit", type_=Integer))
    )


def _statuses_listed() -> Select[Any]:
    res, chk = tables.result.c, tables.check.c
    listed = _runs_listed_ids().subquery("listed")
    return (
        select(res.run_id, chk.check_id, res.attempt, res.status)
        .join_from(tables.result, tables.check, chk.id == res.check_pk)
        .where(res.run_id.in_(select(listed.c.id)))
        .order_by(res.run_id, chk.check_id, res.attempt, res.id)
    )


def _owners_listed() -> Select[Any]:
    """The meta of the listed runs still ``running``: who runs them (``_owner``)."""
    run = tables.run.c
    listed = _runs_listed_ids().subquery("listed")
    return select(run.id, run.meta).where(
        run.id.in_(select(listed.c.id)), run.state == literal_column("'running'")
    )


def _suite_durations() -> Select[Any]:
    task, run, img = tables.task.c, tables.run.c, tables.image.c
    return (
        select(img.alias, task.suite, task.timings)
        .join_from(tables.task, tables.run, task.run_id == run.id)
        .join(tables.image, run.image_id == img.id)
        .where(task.state == "done")
        .order_by(task.id.desc())
        .limit(bindparam("limit", type_=Integer))
    )


STATEMENTS: dict[str, Select[Any]] = {
    "runs_listed": _runs_listed_ids(),
    "statuses_listed": _statuses_listed(),
    "owners_listed": _owners_listed(),
    "suite_durations": _suite_durations(),
}


@dataclass(frozen=True)
class CoreReads:
    """``store.reads.Reads`` on a SQLAlchemy connection (or session): any store."""

    conn: Connection | Session

    def rows(self, name: str, params: Mapping[str, Any]) -> Iterable[Sequence[Any]]:
        return list(self.conn.execute(STATEMENTS[name], dict(params)))
