"""The results database as commands get it: a session factory, each workflow opening its
own sessions from it (``with factory() as session:``)."""

from __future__ import annotations

import os
from pathlib import Path

from sqlalchemy.orm import Session, sessionmaker

from ..store.db import open_engine, session_factory

Factory = sessionmaker[Session]


def sessions(db: str | None) -> Factory:
    """Sessions on --db / VALORCH_DB, else ./results/valorch.sqlite (created, migrated to HEAD)."""
    if db is None and not os.environ.get("VALORCH_DB"):
        db = str(Path.cwd() / "results" / "valorch.sqlite")
    return session_factory(open_engine(db))
