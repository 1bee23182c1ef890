"""Where valorch uses the driver's own cursor (the site's read of every result, the bulk
ingest), the driver's errors never reach the user as themselves: ``damaged.driver_errors``
makes of any of them what SQLAlchemy's hooks make (a damaged store, a full disk, a dropped
table) or SQLAlchemy's own wrapping of it, both of which the CLI's edge turns into exit 3
with a message (orchestrator/cli.py)."""

from __future__ import annotations

import contextlib
import sqlite3

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sqlalchemy.exc import DBAPIError

from orchestrator.errors import InfrastructureError
from orchestrator.store import damaged
from orchestrator.store.db import open_engine

ERRORS = (
    sqlite3.OperationalError,
    sqlite3.DatabaseError,
    sqlite3.IntegrityError,
    sqlite3.ProgrammingError,
    sqlite3.DataError,
    sqlite3.InternalError,
    sqlite3.NotSupportedError,
)
KNOWN = st.sampled_from(
    (
        "database disk image is malformed",
        "file is not a database",
        "database or disk is full",
        "no such table: result",
        "no such column: run.meta",
        "database is locked",
    )
)


@pytest.fixture(scope="module")
def conn(tmp_path_factory):
    engine = open_engine(str(tmp_path_factory.mktemp("drv") / "v.sqlite"))
    with engine.connect() as c:
        yield c
    engine.dispose()


@given(kind=st.sampled_from(ERRORS), text=st.one_of(KNOWN, st.text(max_size=300)))
def test_every_driver_error_becomes_a_named_error(conn, kind, text):
    with pytest.raises((InfrastructureError, DBAPIError)) as got, damaged.driver_errors(conn):
        raise kind(text)
    assert not isinstance(got.value, sqlite3.Error)


def test_the_damage_is_named_as_sqlalchemys_hook_names_it(conn):
    with pytest.raises(InfrastructureError, match="is damaged"), damaged.driver_errors(conn):
        raise sqlite3.DatabaseError("database disk image is malformed")
    missing = pytest.raises(InfrastructureError, match="table 'result' is missing")
    with missing, damaged.driver_errors(conn):
        raise sqlite3.OperationalError("no such table: result")


def test_a_real_garbage_page_read_on_the_raw_cursor_is_named(tmp_path):
    """The site's read of every result on a store whose result pages are garbage."""
    from sqlalchemy.orm import Session

    from orchestrator.store import site_queries

    path = tmp_path / "v.sqlite"
    engine = open_engine(str(path))
    engine.dispose()
    with sqlite3.connect(path) as c:
        c.executemany(
            "INSERT INTO result (run_id, check_pk, attempt, status, duration_s, message, log,"
            " metrics, samples) VALUES ('r', 1, ?, 'pass', 0, ?, '', '{}', x'')",
            [(i, "m" * 500) for i in range(1, 400)],
        )
    with contextlib.closing(sqlite3.connect(path)) as c:
        c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        size = c.execute("PRAGMA page_size").fetchone()[0]
        roots = [
            r for (r,) in c.execute("SELECT rootpage FROM sqlite_master WHERE name = 'result'")
        ]
    data = bytearray(path.read_bytes())
    for root in roots:
        data[(root - 1) * size : root * size] = b"\xab" * size
    path.write_bytes(bytes(data))
    engine = open_engine(str(path))
    try:
        with Session(engine) as session, pytest.raises(InfrastructureError, match="is damaged"):
            list(site_queries.results(session))
    finally:
        engine.dispose()
