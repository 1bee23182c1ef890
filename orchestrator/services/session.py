"""Opening the results database: the session factory every workflow gets from the edge,
and the engine under it for the read paths, which query with Core and never import the ORM
(store/reads.py says why)."""

from __future__ import annotations

import os
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from ..store.location import DEFAULT_PATH

if TYPE_CHECKING:
    from collections.abc import Callable

    from sqlalchemy.engine import Connection, Engine
    from sqlalchemy.orm import Session, sessionmaker

T = TypeVar("T")


def engine(db: str | None) -> Engine:
    """The engine on ``db`` (a SQLAlchemy URL or SQLite path; default: $VALORCH_DB, else
    ./results/valorch.sqlite), at this valorch's schema: what a read path connects to."""
    from ..store.db import open_engine

    if db is None and not os.environ.get("VALORCH_DB"):
        db = str(Path.cwd() / DEFAULT_PATH)
    return open_engine(db)


def read(db: str | None, reading: Callable[[Connection], T]) -> T:
    """``reading`` on a connection to the store (``engine(db)``, which creates, migrates or
    names the damage as every open does): SQLAlchemy Core, never the ORM."""
    with engine(db).connect() as conn:
        return reading(conn)


def sessions(db: str | None) -> sessionmaker[Session]:
    from ..store.db import session_factory

    return session_factory(engine(db))


def engine_of(factory: sessionmaker[Session] | Deferred) -> Engine:
    """The engine under a session factory, for a Core read: a ``Deferred`` one opens its
    store without building the ORM's session factory."""
    if isinstance(factory, Deferred):
        return factory.engine()
    bind: Engine = factory.kw["bind"]
    return bind


def check_same_store(factory: sessionmaker[Session] | Deferred) -> None:
    """The store a run wrote into is still the file it opened (store.db.check_same_file):
    exit 3 otherwise, before the run reports anything. A store never opened passes."""
    if isinstance(factory, Deferred) and not factory.opened:
        return
    from ..store.db import check_same_file

    check_same_file(engine_of(factory))


class Deferred:
    """The session factory for ``db``, opened at its first use: a command that turns out
    to need no store (``valorch run`` on a cluster that rejects the job first, a plan that
    fails) does not open or create one. It is opened with the usual errors (a server, a
    file to create or migrate, a damaged one) before anything runs: the plan reads its
    history from it (services/run), with Core on ``engine()``, and the ORM's session
    factory is built at the first session (the batch's recorder)."""

    def __init__(self, db: str | None) -> None:
        self.db = db
        self._engine: Engine | None = None
        self._factory: sessionmaker[Session] | None = None

    @property
    def opened(self) -> bool:
        return self._engine is not None

    def engine(self) -> Engine:
        if self._engine is None:
            self._engine = engine(self.db)
        return self._engine

    def factory(self) -> sessionmaker[Session]:
        if self._factory is None:
            from ..store.db import session_factory

            self._factory = session_factory(self.engine())
        return self._factory

    def __call__(self) -> Session:
        return self.factory()()

    def begin(self) -> AbstractContextManager[Session]:
        return self.factory().begin()
