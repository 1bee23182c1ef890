"""Engine and session factory. SQLite gets WAL mode and a busy timeout so that
several valorch processes can write to one database at once. The schema is
Alembic's business (store/migrations): opening a database upgrades it to head."""

from __future__ import annotations

import contextlib
import fcntl
from pathlib import Path
from typing import Iterator

from sqlalchemy import create_engine, event, inspect, text
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import OperationalError, SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker

from ..errors import InfrastructureError

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
        with _migration_lock(url):
            migrate(engine)
    except OperationalError as exc:
        raise InfrastructureError(f"cannot open the results database {url}: {exc.orig}",
                                  "check the path and permissions, or pass --db") from None
    except SQLAlchemyError as exc:
        raise InfrastructureError(f"results database {url} failed: {exc}") from None
    return engine


MIGRATIONS = Path(__file__).with_name("migrations")
BASELINE = "0001"  # the schema that create_all made before migrations existed
# The newest migration. Every command opens the database, and asking Alembic for its
# head costs half a second of imports and file parsing; a unit test keeps this equal
# to what Alembic says.
HEAD = "0003"


def _alembic_config(conn: Connection):  # noqa: ANN202
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    cfg.attributes["connection"] = conn
    return cfg


def head_revision() -> str:
    from alembic.script import ScriptDirectory

    return ScriptDirectory(str(MIGRATIONS)).get_current_head()


def current_revision(engine: Engine) -> str | None:
    with engine.connect() as conn:
        if "alembic_version" not in inspect(conn).get_table_names():
            return None
        return conn.execute(text("SELECT version_num FROM alembic_version")).scalar()


def migrate(engine: Engine) -> None:
    """Upgrade to head. A database made by the older create_all (tables, no
    alembic_version) is stamped at the baseline first: upgraded, never recreated."""
    if current_revision(engine) == HEAD:
        return
    from alembic import command

    with engine.begin() as conn:
        tables = set(inspect(conn).get_table_names())
        cfg = _alembic_config(conn)
        if "alembic_version" not in tables and "run" in tables:
            command.stamp(cfg, BASELINE)
        command.upgrade(cfg, "head")


@contextlib.contextmanager
def _migration_lock(url: str) -> Iterator[None]:
    """Serialise schema changes between processes opening one SQLite file at once
    (SQLite DDL outside a transaction would race: "table already exists")."""
    if not url.startswith("sqlite:///") or url == "sqlite:///:memory:":
        yield
        return
    lock_path = Path(url[len("sqlite:///"):] + ".migrate-lock")
    with open(lock_path, "a+") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def session_factory(engine: Engine) -> sessionmaker[Session]:
    return sessionmaker(engine, expire_on_commit=False)


def check_writable(session: Session) -> None:
    """Create, write and drop a scratch table (the preflight's proof that the database is
    writable); raises what the database raises."""
    session.execute(text("CREATE TABLE IF NOT EXISTS valorch_preflight (x INTEGER)"))
    session.execute(text("INSERT INTO valorch_preflight VALUES (1)"))
    session.execute(text("DROP TABLE valorch_preflight"))
    session.commit()
