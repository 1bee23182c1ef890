"""Engine and session factory for SQLite files and PostgreSQL servers.

SQLite gets WAL mode and a busy timeout so that several valorch processes can write
to one file at once, and a new file 16 KiB pages: a faster bulk ingest and shallower
indexes at fleet scale (docs/benchmarks.md, "Why the code is shaped for
speed"). PostgreSQL needs the ``valorch[postgres]`` extra (psycopg 3).

The schema is Alembic's business (store/migrations). Who upgrades it differs:
- a local SQLite file belongs to the machine that opens it: opening it upgrades it
  to head (serialised between processes with a file lock);
- a shared server is never migrated implicitly. Dozens of runners open it, and a
  runner with a newer valorch must not change the schema under the others: a
  database behind this valorch's head is an error that names ``valorch db upgrade``,
  which an operator runs once (store.db.upgrade, serialised with an advisory lock).
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import os
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from sqlalchemy import create_engine, event, inspect, text
from sqlalchemy.engine import URL, Connection, Engine, make_url
from sqlalchemy.exc import (
    ArgumentError,
    DBAPIError,
    NoSuchModuleError,
    OperationalError,
    SQLAlchemyError,
)

from .. import encode
from ..errors import InfrastructureError, InputError
from . import damaged
from .location import DEFAULT_PATH, migrate_lock, sqlite_file
from .revision import BASELINE, HEAD, REVISIONS

if TYPE_CHECKING:
    from alembic.config import Config
    from sqlalchemy.orm import Session, sessionmaker

DEFAULT_URL = f"sqlite:///{DEFAULT_PATH}"
POSTGRES_EXTRA = "pip install 'valorch[postgres]'"
URL_HINT = (
    "pass a SQLite path (results/valorch.sqlite, sqlite:///PATH) or a PostgreSQL URL "
    f"(postgresql://USER@HOST[:PORT]/DATABASE, needs {POSTGRES_EXTRA})"
)
CONNECT_TIMEOUT_S = 10


def url_for(db: str | None) -> str:
    """A SQLAlchemy URL from --db / VALORCH_DB: a URL, or a plain path to a SQLite file.
    ``postgresql://`` and ``postgres://`` mean psycopg 3 (the valorch[postgres] extra)."""
    if not db:
        return DEFAULT_URL
    if "://" not in db:
        return f"sqlite:///{db}"
    scheme, rest = db.split("://", 1)
    if scheme in ("postgresql", "postgres"):
        return f"postgresql+psycopg://{rest}"
    return db


def public_url(db: str | None) -> str:
    """The URL as it may be printed or published: never a password."""
    try:
        return make_url(db if db and "://" in db else url_for(db)).render_as_string(
            hide_password=True
        )
    except (ArgumentError, ValueError):
        return "<unparsable database URL>"


def _parse(db: str | None) -> URL:
    try:
        url = make_url(url_for(db))
    # ValueError: a port that is not a number ('1x', '', '1:2')
    except (ArgumentError, ValueError) as exc:
        why = "its host:port does not parse" if isinstance(exc, ValueError) else "it does not parse"
        raise InputError(
            f"--db '{encode.url(db or '')}' is not a database URL: {why}", URL_HINT
        ) from None
    backend = url.get_backend_name()
    if backend not in ("sqlite", "postgresql"):
        raise InputError(
            f"--db: unsupported database scheme '{url.drivername}' (valorch stores results in "
            "SQLite or PostgreSQL)",
            URL_HINT,
        )
    try:
        url.get_dialect()
    except NoSuchModuleError:
        raise InputError(
            f"--db {public_url(db)}: SQLAlchemy has no driver '{url.drivername}'", URL_HINT
        ) from None
    if backend == "sqlite" and (
        not url.database or url.database == ":memory:" or url.query.get("mode") == "memory"
    ):
        raise InputError(
            f"--db {public_url(db)}: a database in memory keeps nothing: every result "
            "would be lost when valorch exits",
            "pass a SQLite file (results/valorch.sqlite, sqlite:///PATH) or a PostgreSQL URL",
        )
    if url.port is not None and not 0 < url.port < 65536:
        raise InputError(
            f"--db {public_url(db)}: port {url.port} is not a TCP port (1-65535)", URL_HINT
        )
    return url


def where(url: URL) -> str:
    """host:port/database of a server URL, the path of a SQLite file: for messages."""
    if url.get_backend_name() == "sqlite":
        return url.database or ":memory:"
    return f"database '{url.database}' on {url.host or 'localhost'}:{url.port or 5432}"


_OPEN: weakref.WeakSet[Engine] = weakref.WeakSet()


@atexit.register
def _dispose_open_engines() -> None:
    """At exit, every engine still open is disposed: a SQLite file's last connection
    checkpoints its write-ahead log and removes it, a server sees its sessions end
    (the console script ends without the interpreter's teardown, cli.main)."""
    for engine in list(_OPEN):
        with contextlib.suppress(Exception):
            engine.dispose()


def connect(db: str | None) -> Engine:
    """An engine whose database answered; no schema check (store.db.open_engine does that)."""
    url = _parse(db)
    if url.get_backend_name() == "sqlite":
        engine = _sqlite_engine(url)
        _OPEN.add(engine)
        return engine
    try:
        # jit off for valorch's sessions: its queries are short index look-ups, and JIT
        # compilation of a 50,000-row history costs more than the query (bench_scale_fleet.py)
        engine = create_engine(
            url,
            pool_pre_ping=True,
            connect_args={
                "connect_timeout": CONNECT_TIMEOUT_S,
                "application_name": "valorch",
                "options": "-c jit=off",
            },
        )
        damaged.install(engine)
    except ImportError as exc:  # psycopg (or the driver the URL names) is not installed
        raise InputError(
            f"--db {public_url(db)}: the PostgreSQL driver is not installed ({exc})",
            f"{POSTGRES_EXTRA} (psycopg 3)",
        ) from None
    try:
        with engine.connect() as conn:
            conn.execute(text("SELECT 1"))
    except DBAPIError as exc:
        engine.dispose()
        raise _server_error(url, exc) from None
    _OPEN.add(engine)
    return engine


def _server_error(url: URL, exc: DBAPIError) -> InfrastructureError:
    lines = [ln.strip() for ln in str(exc.orig).splitlines() if ln.strip()]
    reason = lines[0] if lines else type(exc.orig).__name__
    # 'connection failed: connection to server at "h", port 1 failed: <why>'
    if " failed: " in reason:
        reason = reason.rsplit(" failed: ", 1)[1]
    reason = reason.replace("FATAL:  ", "")
    low = reason.lower()
    if "database" in low and "does not exist" in low:
        hint = (
            f"create it (createdb -h {url.host} -U {url.username} {url.database}), then "
            "valorch db upgrade --db URL"
        )
    elif (
        "password" in low or "authentication" in low or ("role" in low and "does not exist" in low)
    ):
        hint = "check the user and password (in the URL, PGPASSWORD or ~/.pgpass) and the server's pg_hba.conf"
    else:
        hint = "check that the server runs and accepts connections from this machine (host, port, firewall)"
    return InfrastructureError(f"cannot open the results {where(url)}: {reason}", hint)


#: SQLite files (and the directories above them) this process created: a command that ends
#: in exit 2 or 3 leaves no empty store behind (``undo_created``, called by cli.App)
_CREATED: list[tuple[Path, list[Path]]] = []


def undo_created() -> None:
    """Remove the stores this process created that hold no run, with the directories made
    for them: a failed command (exit 2/3) leaves the file system as it found it."""
    import sqlite3

    _dispose_open_engines()
    while _CREATED:
        path, dirs = _CREATED.pop()
        try:
            with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as conn:
                runs = conn.execute("SELECT count(*) FROM run").fetchone()[0]
        except sqlite3.Error:
            runs = 0
        if runs:
            continue  # results were written: never remove them
        for p in (path, Path(f"{path}-wal"), Path(f"{path}-shm"), migrate_lock(path)):
            with contextlib.suppress(OSError):
                p.unlink()
        for d in reversed(dirs):
            with contextlib.suppress(OSError):
                d.rmdir()


def _sqlite_engine(url: URL) -> Engine:
    path = Path(str(url.database))  # a file: _parse refuses a database in memory
    if path.is_dir():
        raise InfrastructureError(
            f"cannot open the results database {path}: it is a directory, not a SQLite file",
            "pass --db with a SQLite file (or a new path)",
        )
    if not path.exists():
        _CREATED.append((path, [p for p in reversed(path.parents) if not p.exists()]))
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InfrastructureError(
            f"cannot create the results directory {path.parent}: {exc.strerror}",
            "pass --db with a writable location",
        ) from None
    engine = create_engine(url, connect_args={"timeout": 60})

    @event.listens_for(engine, "connect")
    def _sqlite_pragmas(dbapi_conn: Any, _record: object) -> None:
        cur = dbapi_conn.cursor()
        # 16 KiB pages for a new file (ignored for an existing one): faster bulk ingest than
        # 4 KiB and shallower indexes at 10M results (docs/benchmarks.md)
        cur.execute("PRAGMA page_size=16384")
        cur.execute("PRAGMA journal_mode=WAL")
        cur.execute("PRAGMA synchronous=NORMAL")
        cur.execute("PRAGMA busy_timeout=60000")
        cur.execute("PRAGMA foreign_keys=ON")
        # checkpoint the write-ahead log every 160 MB (10,000 pages of 16 KiB) instead of every
        # 16 MB: a bulk ingest copies each page to the file less often (10M results: +8 %)
        cur.execute("PRAGMA wal_autocheckpoint=10000")
        # index pages of a large store stay in memory (bench/bench_scale.py: 10M results)
        cur.execute("PRAGMA cache_size=-262144")
        cur.execute("PRAGMA mmap_size=1073741824")
        cur.close()
        # the store's file (its device and inode) at the engine's first connection:
        # ``check_same_file`` compares it before a run reports success
        if engine not in _IDENTITY:
            with contextlib.suppress(OSError):
                st = os.stat(path)
                _IDENTITY[engine] = (path, st.st_dev, st.st_ino)

    damaged.install(engine)
    return engine


#: the file (device, inode) each SQLite engine's store was when it was first opened
_IDENTITY: weakref.WeakKeyDictionary[Engine, tuple[Path, int, int]] = weakref.WeakKeyDictionary()


def check_same_file(engine: Engine) -> None:
    """The store is still the file it was when it was opened: one deleted or replaced
    meanwhile (its runs went with the old file, or into it, unreachable) is exit 3, never a
    report of results no store holds. A server, or a store never connected to, passes."""
    known = _IDENTITY.get(engine)
    if known is None:
        return
    path, dev, ino = known
    try:
        st = os.stat(path)
    except FileNotFoundError:
        what = "was deleted"
    except OSError as exc:
        what = f"cannot be read any more ({exc.strerror})"
    else:
        if (st.st_dev, st.st_ino) == (dev, ino):
            return
        what = "was replaced by another file"
    raise InfrastructureError(
        f"the results database {path} {what} while this command ran: the results it wrote "
        "are not in the store there now",
        "find out what removes or replaces it (a cleanup job, a second checkout, a sync), "
        "keep it in place, and run again (valorch results list shows what the store holds)",
    )


def open_engine(db: str | None) -> Engine:
    """An engine on a database at this valorch's schema: a SQLite file is upgraded
    in place; a server behind head is an error naming `valorch db upgrade`."""
    engine = connect(db)
    url = engine.url
    try:
        if url.get_backend_name() == "sqlite":
            if current_revision(engine) != HEAD:
                with _migration_lock(url):
                    migrate(engine)
            clean_stale_lock(url)
        else:
            _require_head(engine, url)
        # a dropped table or column: named before anything runs
        from .tables import metadata

        damaged.check_structure(tables(engine), metadata)
    except OperationalError as exc:
        engine.dispose()
        if url.get_backend_name() != "sqlite":
            raise _server_error(url, exc) from None
        raise InfrastructureError(
            f"cannot open the results database {where(url)}: {exc.orig}",
            "check the path and permissions, or pass --db",
        ) from None
    except SQLAlchemyError as exc:
        engine.dispose()
        raise InfrastructureError(f"results {where(url)} failed: {exc}") from None
    except BaseException:
        engine.dispose()  # a refused schema or a damaged store leaves no pooled connection open
        raise
    return engine


def tables(engine: Engine) -> dict[str, set[str]]:
    """The tables of the store and their columns, as the database has them."""
    insp = inspect(engine)
    return {t: {c["name"] for c in insp.get_columns(t)} for t in insp.get_table_names()}


MIGRATIONS = Path(__file__).with_name("migrations")


def _require_head(engine: Engine, url: URL) -> None:
    rev = current_revision(engine)
    if rev == HEAD:
        return
    if rev in REVISIONS:
        raise InfrastructureError(
            f"the results {where(url)} is at schema {rev}; this valorch needs {HEAD}",
            "upgrade it once, from one machine: valorch db upgrade --db URL "
            "(runners never migrate a shared server)",
        )
    if rev is None:
        raise InfrastructureError(
            f"the results {where(url)} has no valorch schema yet",
            "create it once: valorch db upgrade --db URL",
        )
    raise newer(url, rev)


def newer(url: URL, rev: str) -> InfrastructureError:
    """A store at a schema this valorch does not know: a server's name already says
    "database", a SQLite file's path does not."""
    name = where(url) if url.get_backend_name() != "sqlite" else f"database {where(url)}"
    return InfrastructureError(
        f"the results {name} is at schema {rev}, newer than this valorch knows ({HEAD})",
        "install the valorch version that upgraded it",
    )


def _alembic_config(conn: Connection) -> Config:
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    cfg.attributes["connection"] = conn
    return cfg


def current_revision(engine: Engine) -> str | None:
    with engine.connect() as conn:
        if "alembic_version" not in inspect(conn).get_table_names():
            return None
        return conn.execute(text("SELECT version_num FROM alembic_version")).scalar()


def migrate(engine: Engine) -> None:
    """Upgrade to head. A database made by the older create_all (tables, no
    alembic_version) is stamped at the baseline first: upgraded, never recreated."""
    rev = current_revision(engine)
    if rev == HEAD:
        return
    if rev is not None and rev not in REVISIONS:
        raise newer(engine.url, rev)
    from alembic import command

    with engine.begin() as conn:
        if conn.dialect.name == "postgresql":
            # one upgrader at a time; the others wait here and then find nothing to do
            conn.execute(text("SELECT pg_advisory_xact_lock(7268656)"))
        tables = set(inspect(conn).get_table_names())
        cfg = _alembic_config(conn)
        if "alembic_version" not in tables and "run" in tables:
            command.stamp(cfg, BASELINE)
        command.upgrade(cfg, "head")


def upgrade(db: str | None) -> tuple[str | None, str]:
    """`valorch db upgrade`: the revision before and after."""
    engine = connect(db)
    try:
        before = current_revision(engine)
        with _migration_lock(engine.url):
            migrate(engine)
        return before, current_revision(engine) or HEAD
    except OperationalError as exc:
        if engine.url.get_backend_name() != "sqlite":
            raise _server_error(engine.url, exc) from None
        raise InfrastructureError(f"cannot upgrade {where(engine.url)}: {exc.orig}") from None
    finally:
        engine.dispose()


def status(db: str | None) -> dict[str, str | None]:
    """`valorch db status`: where, which schema, which this valorch needs."""
    engine = connect(db)
    try:
        return {
            "database": public_url(db),
            "dialect": engine.dialect.name,
            "revision": current_revision(engine),
            "head": HEAD,
        }
    finally:
        engine.dispose()


@contextlib.contextmanager
def _migration_lock(url: URL) -> Iterator[None]:
    """Serialise schema changes between processes opening one SQLite file at once
    (SQLite DDL outside a transaction would race: "table already exists"). The lock is
    an flock on ``DB.migrate-lock``, which exists only while a migration runs: the
    holder removes it before unlocking, and a waiter that finds its file replaced
    locks the new one (so two processes never hold locks on two different files)."""
    path = sqlite_file(url)
    if path is None:
        yield
        return
    lock_path = migrate_lock(path)
    while True:
        fh = open(lock_path, "a+")  # noqa: SIM115  # held open: the flock lives as long as it
        fcntl.flock(fh, fcntl.LOCK_EX)
        if _same_file(fh, lock_path):
            break
        fh.close()  # removed (or replaced) by the previous holder while we waited
    try:
        fh.truncate(0)
        fh.write(f"{os.getpid()}\n")  # who migrates, for a person looking
        fh.flush()
        yield
    finally:
        with contextlib.suppress(OSError):
            lock_path.unlink()
        fcntl.flock(fh, fcntl.LOCK_UN)
        fh.close()


def _same_file(fh: IO[str], path: Path) -> bool:
    try:
        return os.fstat(fh.fileno()).st_ino == os.stat(path).st_ino
    except FileNotFoundError:
        return False


def clean_stale_lock(url: URL) -> None:
    """Remove a ``DB.migrate-lock`` left behind (by a crashed process, or by a valorch that
    never removed it). Its owner is gone when the flock can be taken at once (the kernel
    drops an flock with its process); one held now belongs to a live migration and stays."""
    path = sqlite_file(url)
    lock_path = None if path is None else migrate_lock(path)
    if lock_path is None or not lock_path.exists():
        return
    # an OSError (the file gone, unreadable, or its flock held by a live migration) leaves it
    with contextlib.suppress(OSError), open(lock_path, "a+") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        try:
            if _same_file(fh, lock_path):
                lock_path.unlink()
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def session_factory(engine: Engine) -> sessionmaker[Session]:
    """The ORM's sessions on ``engine``, for the write paths (imported here: the read paths
    never load it, store/reads.py)."""
    from sqlalchemy.orm import sessionmaker

    return sessionmaker(engine, expire_on_commit=False)


def check_writable(session: Session) -> None:
    """Create, write and drop a scratch table (the preflight's proof that the database is
    writable); raises what the database raises."""
    session.execute(text("CREATE TABLE IF NOT EXISTS valorch_preflight (x INTEGER)"))
    session.execute(text("INSERT INTO valorch_preflight VALUES (1)"))
    session.execute(text("DROP TABLE valorch_preflight"))
    session.commit()
