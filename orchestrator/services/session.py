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
    """The session factory for ``db``, opened at its first use (``valorch run``: a batch's
    first containers start before SQLAlchemy is loaded, services/run). Until then,
    ``history`` reads a local SQLite file at this valorch's schema with the standard
    library; anything else (a server, a file to create or migrate, a damaged one) is
    opened on the spot, with the usual errors before anything runs."""

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

    def history(self) -> dict[tuple[str, str], float] | None:
        """The plan's history read without opening the store, or None where it must be opened."""
        if self.opened:
            return None
        from ..store import lite

        conn = lite.connect(self.db)
        if conn is None:
            return None
        try:
            return lite.suite_durations(conn)
        except Exception:  # noqa: BLE001 - anything odd: the store is opened and says what is wrong
            return None
        finally:
            conn.close()
