"""Named baselines: a run or a published matrix version that diffs compare against."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..errors import InputError
from .session import engine_of

if TYPE_CHECKING:  # listing reads with Core; naming one loads the ORM
    from sqlalchemy.orm import Session, sessionmaker

    from .session import Deferred


def set_baseline(factory: sessionmaker[Session], name: str, target: str) -> str:
    """Name a run (id or unique prefix) or a matrix version; replaces an existing name.
    What the name now points at, in words."""
    from ..store import bulk, queries

    with factory() as session:
        mv = bulk.matrix_version(session, target)
        run = None if mv is not None else queries.get_run(session, target)
        if mv is None and run is None:
            raise InputError(
                f"'{target}' is neither a run nor a published matrix version",
                "list runs with `valorch results list`",
            )
        bulk.set_baseline(
            session, name, run_id=run.id if run else None, version=mv.version if mv else None
        )
        session.commit()
        if run is not None:
            return f"run {run.id} ({run.image.alias})"
        return f"matrix version {mv.version if mv else target}"


def baselines(factory: sessionmaker[Session] | Deferred) -> list[dict[str, Any]]:
    """Every named baseline, by name: what it names and when it was set."""
    from ..store import reads

    with engine_of(factory).connect() as conn:
        return [
            {"name": n, "run": run, "matrix_version": mv, "created": created.isoformat()}
            for n, run, mv, created in reads.baselines(conn)
        ]
