"""Opening the results database: the session factory every workflow gets from the edge."""

from __future__ import annotations

import os
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..store.location import DEFAULT_PATH

if TYPE_CHECKING:
    from sqlalchemy.orm import Session, sessionmaker


def sessions(db: str | None) -> sessionmaker[Session]:
    """The session factory for ``db`` (a SQLAlchemy URL or SQLite path; default: $VALORCH_DB,
    else ./results/valorch.sqlite)."""
    from ..store.db import open_engine, session_factory

    if db is None and not os.environ.get("VALORCH_DB"):
        db = str(Path.cwd() / DEFAULT_PATH)
    return session_factory(open_engine(db))


class Deferred:
    """The session factory for ``db``, opened at its first use: a command that turns out
    to need no store (``valorch run`` on a cluster that rejects the job first, a plan that
    fails) does not open or create one. It is opened with the usual errors (a server, a
    file to create or migrate, a damaged one) before anything runs: the plan reads its
    history from it (services/run)."""

    def __init__(self, db: str | None) -> None:
        self.db = db
        self._factory: sessionmaker[Session] | None = None

    @property
    def opened(self) -> bool:
        return self._factory is not None

    def factory(self) -> sessionmaker[Session]:
        if self._factory is None:
            self._factory = sessions(self.db)
        return self._factory

    def __call__(self) -> Session:
        return self.factory()()

    def begin(self) -> AbstractContextManager[Session]:
        """A session in a transaction, as ``sessionmaker.begin``."""
        return self.factory().begin()

    @property
    def kw(self) -> dict[str, Any]:
        return self.factory().kw
