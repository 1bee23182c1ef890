"""Triage of a stored run: every fail, crash, timeout and error with its class and evidence
(regression/triage.py decides; this gathers the facts from the store and the catalog)."""

from __future__ import annotations

from typing import Any

from sqlalchemy.orm import Session, sessionmaker

from ..errors import InputError
from ..matrix.model import verdict
from ..regression.triage import FAILING, Case, Seen, Triage, classify
from ..store import queries
from ..store.triage_queries import check_history
from .attest import host_class


def triage_run(factory: sessionmaker[Session], run_id: str, catalog: Any = None) -> dict[str, Triage]:
    """check id -> Triage for each check of the run that did not pass (a flaky one included)."""
    with factory() as session:
        run = queries.get_run(session, run_id)
        if run is None:
            raise InputError(f"no run '{run_id}' in the results database", "valorch results list shows the runs")
        per: dict[str, list[tuple[int, str]]] = {}
        for r in queries.run_results(session, run.id):
            per.setdefault(r.check.check_id, []).append((r.attempt, r.status))
        red = {c: tuple(s for _, s in sorted(a)) for c, a in per.items()
               if verdict(s for _, s in sorted(a)) in (*FAILING, "flaky")}
        history: dict[str, dict[str, list[tuple[int, str]]]] = {}
        facts: dict[str, tuple[str, str, str, str]] = {}
        for rid, digest, host, spec, started, check, attempt, status in check_history(
                session, run.image.alias, list(red), run.id):
            history.setdefault(check, {}).setdefault(rid, []).append((attempt, status))
            facts[rid] = (digest or "", host, host_class(spec), started.isoformat())
        mine = (run.image.digest or "", run.host.name, host_class(run.host.spec), run.started.isoformat())
        alias = run.image.alias
    pinned = _pinned(catalog, alias)
    out = {}
    for check, attempts in red.items():
        seen = tuple(Seen(rid, *facts[rid][:3], verdict(s for _, s in sorted(a)), facts[rid][3])
                     for rid, a in history.get(check, {}).items())
        found = classify(Case(check, run.id, mine[0], mine[1], mine[2], mine[3], attempts, seen,
                              pinned, "the catalog" if pinned else ""))
        if found is not None:
            out[check] = found
    return out


def _pinned(catalog: Any, alias: str) -> str | None:
    if catalog is None:
        return None
    try:
        return catalog.resolve(alias).digest
    except InputError:  # an image no longer (or never) in the catalog: no pin to compare with
        return None


def as_json(found: dict[str, Triage]) -> dict[str, Any]:
    return {c: {"class": t.cls, "reason": t.reason, "runs": list(t.runs), "hosts": list(t.hosts),
                "digests": list(t.digests)} for c, t in sorted(found.items())}
