"""Stored runs: list, show, export to one JSON document, import one."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InputError
from ..store import queries
from . import views
from .session import engine_of

if TYPE_CHECKING:  # ``show`` reads with Core; export and import load the ORM
    from sqlalchemy.orm import Session, sessionmaker

    from .session import Deferred

    Factory = sessionmaker[Session]


def _no_run(run_id: str) -> InputError:
    return InputError(
        f"no run '{run_id}' in the results database", "valorch results list shows the runs"
    )


def show(factory: Factory | Deferred, run_id: str, statuses: Sequence[str] = ()) -> dict[str, Any]:
    """One run with every attempt of every check (views.run_json); with ``statuses``, only
    the attempts in one of them (the run's counts stay whole)."""
    from ..store import reads

    with engine_of(factory).connect() as conn:
        shown = reads.shown(conn, run_id)
    if shown is None:
        raise _no_run(run_id)
    data = views.run_json(shown)
    if statuses:
        data["results"] = [r for r in data["results"] if r["status"] in statuses]
    return data


def export(factory: Factory, run_ids: Sequence[str]) -> dict[str, Any]:
    """Runs (ids or unique prefixes, each once) as one export document."""
    from ..store import transfer

    with factory() as session:
        runs = []
        for run_id in run_ids:
            run = queries.get_run(session, run_id)
            if run is None:
                raise _no_run(run_id)
            if run not in runs:
                runs.append(run)
        return transfer.export_runs(session, runs)


IMPORT_HINT = "pass a file written by valorch results export (nothing was imported)"


def read_export(path: Path) -> Any:
    """The export document in ``path``, parsed and validated (exit 2 naming the place)."""
    import json

    from .. import yamlio
    from ..store import transfer

    text = yamlio.read_text(path, "results export", yamlio.CAPS["export"])
    try:
        doc = json.loads(text, parse_int=yamlio.bounded_int)
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}:{exc.lineno}: not JSON ({exc.msg})", IMPORT_HINT) from None
    except ValueError as exc:  # bounded_int: a number past 64 bits
        raise InputError(f"{path}: not a results export: {exc}", IMPORT_HINT) from None
    except RecursionError:
        raise InputError(
            f"{path}: not a results export: JSON nested too deeply", IMPORT_HINT
        ) from None
    try:
        transfer.validate_export(doc)
    except transfer.TransferError as exc:
        raise InputError(f"{path}: {exc}", IMPORT_HINT) from None
    return doc


def import_(factory: Factory, doc: Any, source: str, dry_run: bool = False) -> dict[str, int]:
    """Add the runs of an export document; runs already stored are left alone. New counts.
    Each new run keeps where it came from (this machine and the file's absolute path).
    ``dry_run``: count what would be added, then roll back."""
    import socket

    from ..store import transfer

    where = f"{socket.gethostname()}:{Path(source).resolve()}"
    with factory() as session:
        try:
            counts = transfer.import_runs(session, doc, where)
        except transfer.TransferError as exc:
            raise InputError(f"{source}: {exc}", IMPORT_HINT) from None
        if dry_run:
            session.rollback()
        else:
            session.commit()
    if not dry_run:  # the imported runs' failing checks, triaged against this store's history
        from .triage import record_new

        record_new(
            factory, [str(r.get("id", "")) for r in doc.get("runs", []) if isinstance(r, dict)]
        )
    return counts
