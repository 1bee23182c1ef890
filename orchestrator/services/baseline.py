"""Named baselines: a run or a published matrix version that diffs compare against."""

from __future__ import annotations

from typing import Any

from sqlalchemy.orm import Session, sessionmaker

from ..errors import InputError
from ..store import bulk, queries


def set_baseline(factory: sessionmaker[Session], name: str, target: str) -> str:
    """Name a run (id or unique prefix) or a matrix version; replaces an existing name.
    What the name now points at, in words."""
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


def baselines(factory: sessionmaker[Session]) -> list[dict[str, Any]]:
    with factory() as session:
        return [
            {
                "name": b.name,
                "run": b.run_id,
                "matrix_version": b.matrix_version,
                "created": b.created.isoformat(),
            }
            for b in bulk.baselines(session)
        ]
