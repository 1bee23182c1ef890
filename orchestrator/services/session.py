"""Opening the results database: the session factory every workflow gets from the edge."""

from __future__ import annotations

import os
from pathlib import Path

from sqlalchemy.orm import Session, sessionmaker

from ..store.db import open_engine, session_factory
from ..store.location import DEFAULT_PATH


def sessions(db: str | None) -> sessionmaker[Session]:
    """The session factory for ``db`` (a SQLAlchemy URL or SQLite path; default: $VALORCH_DB,
    else ./results/valorch.sqlite)."""
    if db is None and not os.environ.get("VALORCH_DB"):
        db = str(Path.cwd() / DEFAULT_PATH)
    return session_factory(open_engine(db))
