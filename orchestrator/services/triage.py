"""Triage of a stored run: every fail, crash, timeout and error with its class and evidence
(regression/triage.py decides; this gathers the facts from the store and the catalog, and
keeps what it decided beside the results when a run finishes or arrives by push/import)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from ..errors import InputError
from ..hostclass import host_class
from ..matrix.model import verdict
from ..regression.triage import FAILING, Case, Seen, Triage, classify
from ..store import queries
from ..store import triage_queries as tq
from .session import engine_of

if TYPE_CHECKING:  # a stored triage is read with Core; deciding one loads the ORM
    from sqlalchemy.orm import Session, sessionmaker

    from ..catalog.core import Catalog
    from ..regression.rule import Side
    from ..store.models import Run
    from .session import Deferred

#: preflight failures and quarantines of a run's host this long before it started or after it ended count
AROUND = timedelta(hours=12)
MAX_DETAILS = 40  # inventory changes attached to an image drift
EVIDENCE = ("runs", "hosts", "digests", "details")  # Triage's fields after cls and reason


def _decide(
    session: Session, run: Run, pinned: str | None, pinned_by: str = "the catalog"
) -> dict[str, Triage]:
    per: dict[str, list[tuple[int, str]]] = {}
    defined: dict[str, str] = {}  # check id -> its definition hash in this run
    for r in queries.run_results(session, run.id):
        per.setdefault(r.check.check_id, []).append((r.attempt, r.status))
        if r.definition:
            defined[r.check.check_id] = r.definition
    red = {
        c: tuple(s for _, s in sorted(a))
        for c, a in per.items()
        if verdict(s for _, s in sorted(a)) in (*FAILING, "flaky")
    }
    here = ((run.id,), (run.host.name,), (run.image.digest or "",))
    out = {
        f"suite {suite}": Triage(
            "infrastructure",
            f"suite {suite} never reported: {error[:500]} (engine, "
            "registry or scheduler: the run says nothing about the image)",
            *here,
        )
        for suite, error in tq.failed_tasks(session, run.id)
    }
    if not red:
        return out
    history: dict[str, dict[str, list[tuple[int, str]]]] = {}
    facts: dict[str, tuple[str, str, str, str]] = {}
    definitions: dict[tuple[str, str], str] = {}  # (run, check) -> definition hash
    for rid, digest, host, spec, started, check, attempt, status, dfn in tq.check_history(
        session, run.image.alias, list(red), run.id
    ):
        history.setdefault(check, {}).setdefault(rid, []).append((attempt, status))
        facts[rid] = (digest or "", host, host_class(spec), started.isoformat())
        if dfn:
            definitions[(rid, check)] = dfn
    mine = (
        run.image.digest or "",
        run.host.name,
        host_class(run.host.spec),
        run.started.isoformat(),
    )
    events = tq.host_events(
        session, run.host.name, run.started - AROUND, (run.ended or run.started) + AROUND
    )
    for check, attempts in red.items():
        seen = tuple(
            Seen(
                rid,
                *facts[rid][:3],
                verdict(s for _, s in sorted(a)),
                facts[rid][3],
                definitions.get((rid, check), ""),
            )
            for rid, a in history.get(check, {}).items()
        )
        found = classify(
            Case(
                check,
                run.id,
                *mine,
                attempts,
                seen,
                pinned,
                pinned_by if pinned else "",
                tuple(e[2] for e in events),
                tuple(e[0] for e in events),
                defined.get(check, ""),
            )
        )
        if found is not None:
            out[check] = found
    drift = [t for t in out.values() if t.cls == "image drift"]
    if drift:
        details = inventory_diff(session, *drift[0].digests[:2])
        out = {
            c: replace(t, details=details) if t.cls == "image drift" else t for c, t in out.items()
        }
    return out


def inventory_diff(session: Session, old: str, new: str) -> tuple[str, ...]:
    """The stored inventories of two digests, component by component (``valorch inventory``
    stores one per image): what an image drift attaches."""
    from .. import audit
    from ..store import inventory_queries

    a, b = (inventory_queries.inventory_of_digest(session, d) for d in (old, new))
    if a is None or b is None:
        missing = [d for d, got in ((old, a), (new, b)) if got is None]
        return tuple(
            f"no stored inventory of {d[:19]}: valorch inventory audit --image REPOSITORY@{d} stores one"
            for d in missing
        )
    changes = audit.diff(a[1], b[1])
    if not changes:
        return (f"inventories of runs {a[0].id[:8]} and {b[0].id[:8]}: no component changed",)
    lines = [
        f"{c.kind} {c.subject}: {c.old or '-'} -> {c.new or '-'}" for c in changes[:MAX_DETAILS]
    ]
    if len(changes) > MAX_DETAILS:
        lines.append(
            f"... and {len(changes) - MAX_DETAILS} more (valorch inventory diff {a[0].id[:8]} {b[0].id[:8]})"
        )
    return (
        f"inventory diff of runs {a[0].id[:8]} -> {b[0].id[:8]}: {len(changes)} changes",
        *lines,
    )


def record(
    factory: sessionmaker[Session], run_ids: Sequence[str], catalog: Catalog | None = None
) -> dict[str, dict[str, Triage]]:
    """Decide and store the triage of finished runs (when a run ends, and for runs that arrive
    by push or import); run id -> its triage."""
    done: dict[str, dict[str, Triage]] = {}
    with factory() as session:
        for run_id in run_ids:
            run = queries.get_run(session, run_id)
            # "error": the engine went away
            if run is None or run.state not in (*tq.FINISHED, "error"):
                continue
            found = _decide(session, run, _pinned(catalog, run.image.alias))
            when = queries.now()
            tq.save(
                session,
                run.id,
                [(c, t.cls, t.reason, _evidence(t)) for c, t in sorted(found.items())],
                when,
            )
            queries.merge_run_meta(session, run.id, "triaged", when.isoformat(timespec="seconds"))
            done[run.id] = found
        session.commit()
    return done


def record_new(factory: sessionmaker[Session], run_ids: Sequence[str]) -> int:
    """The triage of those of ``run_ids`` that hold none yet (pushed or imported runs): how many."""
    with factory() as session:
        todo = tq.untriaged(session, run_ids)
    return len(record(factory, todo)) if todo else 0


def stored_or_now(
    factory: sessionmaker[Session] | Deferred,
    run_id: str,
    pins: Callable[[], Catalog | None] | None = None,
    now: bool = False,
) -> dict[str, Triage]:
    """The triage stored with the run; decided now (against the pins of the catalog ``pins``
    gives, loaded only then) for a run that has none (older or running), or when ``now``."""
    got = None
    if not now:
        with engine_of(factory).connect() as conn:
            got = tq.stored(conn, run_id)
    if got is None:
        with factory() as session:
            run = queries.get_run(session, run_id)
            if run is None:
                raise InputError(
                    f"no run '{run_id}' in the results database",
                    "valorch results list shows the runs",
                )
            got = None if now else tq.stored(session, run.id)
            if got is None:
                return _decide(session, run, _pinned(pins() if pins else None, run.image.alias))
    return {
        c: Triage(cls, reason, *(tuple(ev.get(k, ())) for k in EVIDENCE))
        for c, (cls, reason, ev) in got.items()
    }


def stored_many(
    factory: sessionmaker[Session], run_ids: Sequence[str]
) -> dict[str, dict[str, Triage]]:
    """run id -> check id -> stored Triage (decided now for runs without one)."""
    return {rid: stored_or_now(factory, rid) for rid in dict.fromkeys(run_ids)}


def _evidence(t: Triage) -> dict[str, list[str]]:
    return {k: list(getattr(t, k)) for k in EVIDENCE}


def _pinned(catalog: Catalog | None, alias: str) -> str | None:
    if catalog is None:
        return None
    try:
        return catalog.resolve(alias).digest
    except InputError:  # an image no longer (or never) in the catalog: no pin to compare with
        return None


def as_json(found: dict[str, Triage]) -> dict[str, Any]:
    return {
        c: {"class": t.cls, "reason": t.reason, **_evidence(t)} for c, t in sorted(found.items())
    }


def line(check: str, t: Triage) -> str:
    return f"{check}: {t.cls}: {t.reason}"


def for_runs(
    factory: sessionmaker[Session], run_ids: Sequence[str], base: Side | None = None
) -> dict[tuple[str, str], Triage]:
    """(image alias, check id) -> the triage of that check in ``run_ids`` (the head of a diff
    or a qualification, whose environments are image aliases); the first run that has one wins.
    A run whose image ran another digest than ``base`` (the diff's base side) ran for the same
    alias is decided again against that digest (an image drift: the tag moved since the base)."""
    expected = dict(base.digests) if base is not None else {}
    found_by: dict[str, dict[str, Triage]] = {}
    with factory() as session:
        runs = [run for rid in run_ids if (run := queries.get_run(session, rid)) is not None]
        alias = {run.id: run.image.alias for run in runs}
        for run in runs:
            want = expected.get(run.image.alias)
            if want and base is not None and run.image.digest and want != run.image.digest:
                found_by[run.id] = _decide(session, run, want, f"{base.kind} {base.label} ran")
    out: dict[tuple[str, str], Triage] = {}
    for rid, found in {
        **stored_many(factory, [r for r in alias if r not in found_by]),
        **found_by,
    }.items():
        for check, t in found.items():
            out.setdefault((alias[rid], check), t)
    return out
