"""Engine and session factory. SQLite gets WAL mode and a busy timeout so that
several valorch processes can write to one database at once."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import create_engine, event
from sqlalchemy.engine import Engine
from sqlalchemy.exc import OperationalError, SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker

from ..errors import InfrastructureError
from .models import Base

DEFAULT_URL = "sqlite:///results/valorch.sqlite"


def url_for(db: str | None) -> str:
    """A SQLAlchemy URL from --db / VALORCH_DB: a URL, or a plain path to a SQLite file."""
    if not db:
        return DEFAULT_URL
    if "://" in db:
        return db
    return f"sqlite:///{db}"


def open_engine(db: str | None) -> Engine:
    url = url_for(db)
    if url.startswith("sqlite:///") and url != "sqlite:///:memory:":
        path = Path(url[len("sqlite:///"):])
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise InfrastructureError(f"cannot create the results directory {path.parent}: {exc.strerror}",
                                      "pass --db with a writable location") from None
    engine = create_engine(url, connect_args={"timeout": 60} if url.startswith("sqlite") else {})
    if url.startswith("sqlite"):
        @event.listens_for(engine, "connect")
        def _sqlite_pragmas(dbapi_conn, _record):  # noqa: ANN001
            cur = dbapi_conn.cursor()
            cur.execute("PRAGMA journal_mode=WAL")
            cur.execute("PRAGMA synchronous=NORMAL")
            cur.execute("PRAGMA busy_timeout=60000")
            cur.execute("PRAGMA foreign_keys=ON")
            cur.close()
    try:
        Base.metadata.create_all(engine)
    except OperationalError as exc:
        raise InfrastructureError(f"cannot open the results database {url}: {exc.orig}",
                                  "check the path and permissions, or pass --db") from None
    except SQLAlchemyError as exc:
        raise InfrastructureError(f"results database {url} failed: {exc}") from None
    return engine


def session_factory(engine: Engine) -> sessionmaker[Session]:
    return sessionmaker(engine, expire_on_commit=False)
