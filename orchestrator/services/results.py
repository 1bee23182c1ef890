"""Stored runs: list, show, export to one JSON document, import one."""

from __future__ import annotations

from collections import Counter
from typing import Any, Sequence

from sqlalchemy.orm import Session, sessionmaker

from ..errors import InputError
from ..store import queries, transfer
from . import views

Factory = sessionmaker[Session]


def _no_run(run_id: str) -> InputError:
    return InputError(f"no run '{run_id}' in the results database", "valorch results list shows the runs")


def listing(factory: Factory, limit: int, image: str | None) -> list[dict[str, Any]]:
    """Runs, newest first, each with its final counts by status (``counts``, a Counter)."""
    with factory() as session:
        rows = []
        for r in queries.list_runs(session, limit, image):
            counts: Counter = views.final_counts(queries.run_results(session, r.id))
            rows.append({"run": r.id, "image": r.image.alias, "digest": r.image.digest, "host": r.host.name,
                         "job": r.job, "state": r.state, "started": r.started, "counts": counts})
        return rows


def show(factory: Factory, run_id: str) -> dict[str, Any]:
    """One run with every attempt of every check (views.run_json)."""
    with factory() as session:
        run = queries.get_run(session, run_id)
        if run is None:
            raise _no_run(run_id)
        return views.run_json(run, queries.run_results(session, run.id))


def export(factory: Factory, run_ids: Sequence[str]) -> dict[str, Any]:
    """Runs (ids or unique prefixes, each once) as one export document."""
    with factory() as session:
        runs = []
        for run_id in run_ids:
            run = queries.get_run(session, run_id)
            if run is None:
                raise _no_run(run_id)
            if run not in runs:
                runs.append(run)
        return transfer.export_runs(session, runs)


def import_(factory: Factory, doc: Any, source: str) -> dict[str, int]:
    """Add the runs of an export document; runs already stored are left alone. New counts."""
    with factory() as session:
        try:
            counts = transfer.import_runs(session, doc)
        except transfer.TransferError as exc:
            raise InputError(f"{source}: {exc}", "pass a file written by valorch results export") from None
        session.commit()
    return counts
