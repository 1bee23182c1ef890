"""`valorch results prune`: raw samples and ad-hoc runs older than N days go.

On a runner's local store, ``pushed_to`` names the shared store: only runs it holds
whole (same results) are touched, and those go whole, whatever their job: the
shared store keeps them. A run's local copy is never deleted before that."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session

from ..errors import InfrastructureError, InputError
from ..store import push as store_push
from ..store import retention
from ..store.db import open_engine, session_factory, url_for, where
from ..store.queries import now


@dataclass(frozen=True)
class PruneReport:
    plan: retention.Plan
    dry_run: bool
    done: dict[str, int]


def prune(
    db: str | None,
    keep_days: int,
    keep_published: bool = True,
    dry_run: bool = False,
    pushed_to: str | None = None,
) -> PruneReport:
    if keep_days < 0:
        raise InputError(f"--keep-days {keep_days}: must be 0 or more")
    if pushed_to is not None and not pushed_to.strip():
        raise InputError(
            "--pushed-to is empty: no shared store to ask which runs it holds",
            "pass the shared store's URL, or leave --pushed-to out",
        )
    if pushed_to and url_for(pushed_to) == url_for(db):
        raise InputError(
            "--pushed-to names the database being pruned", "name the shared store the runs went to"
        )
    engine = open_engine(db)
    factory = session_factory(engine)
    cutoff = now() - timedelta(days=keep_days)
    try:
        with factory() as s:
            confirmed = _confirmed(s, pushed_to) if pushed_to else None
            p = retention.plan(
                s, cutoff, keep_published, confirmed, delete_all=pushed_to is not None
            )
            if dry_run:
                return PruneReport(p, True, {})
            done = retention.apply(s, p, now())
            s.commit()
        return PruneReport(p, False, done)
    finally:
        engine.dispose()


def _confirmed(local: Session, pushed_to: str) -> set[str]:
    """The local runs the shared store holds with as many results as here."""
    ids, _ = store_push.finished_run_ids(local)
    mine = store_push.result_counts(local, ids)
    server_engine = open_engine(pushed_to)
    try:
        with session_factory(server_engine)() as s:
            theirs = store_push.result_counts(s, ids)
            there = store_push.present(s, ids)
    except DBAPIError as exc:
        raise InfrastructureError(
            f"cannot ask the results {where(server_engine.url)} which runs it holds: "
            f"{str(exc.orig).strip().splitlines()[0]}",
            "nothing was pruned; run it again once the server answers",
        ) from None
    finally:
        server_engine.dispose()
    return {i for i in there if theirs.get(i, 0) == mine.get(i, 0)}
