"""The store's change log (migration 0011, store/changes.py): whatever writes to the store,
valorch or SQL by hand, a reader that took a mark learns exactly which runs changed after it
("" for anything else), on SQLite and on PostgreSQL; every table of the schema is watched,
so a table added later without its triggers fails here; and a change still uncommitted when
the mark was taken is found once committed."""

from __future__ import annotations

import threading
import uuid

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import text

from orchestrator.spec import CheckResult, ImageSpec
from orchestrator.store import changes
from orchestrator.store.db import open_engine, session_factory, upgrade
from orchestrator.store.tables import metadata
from tests.store_helpers import stored_run

IMAGE = ImageSpec(alias="img", reference="acme/img:1", backend="cpu")

# a write a person or a program might make: (table, SQL with :r for a run id, of a run?)
WRITES = (
    ("run", "UPDATE run SET state = 'failed' WHERE id = :r", True),
    ("result", "UPDATE result SET message = 'edited' WHERE run_id = :r", True),
    ("result", "DELETE FROM result WHERE run_id = :r AND attempt = 1", True),
    # a result moved to the next run: both runs changed
    (
        "result",
        "UPDATE result SET run_id = (SELECT min(id) FROM run WHERE id > :r), attempt = id + 1000 "
        "WHERE run_id = :r AND EXISTS (SELECT 1 FROM run WHERE id > :r)",
        "moved",
    ),
    ("task", "UPDATE task SET error = 'x' WHERE run_id = :r", True),
    (
        "inventory",
        "INSERT INTO inventory (run_id, component, value, source, evidence, extra) "
        "VALUES (:r, :n, '1', 'probe', '', '{}')",
        True,
    ),
    ("inventory", "DELETE FROM inventory WHERE run_id = :r", True),
    ("triage", "DELETE FROM triage WHERE run_id = :r", True),
    ("image", "UPDATE image SET family = family WHERE alias = 'img'", False),
    ("host", "UPDATE host SET name = name", False),
    ("check", 'UPDATE "check" SET feature = feature', False),
    ("baseline", "DELETE FROM baseline", False),
    (
        "acceptance",
        "INSERT INTO acceptance (check_id, env, reason, by, until, created) VALUES "
        "('k.one', '*', 'why', 'me', '2030-01-01 00:00:00', '2026-01-01 00:00:00')",
        False,
    ),
)


def _runs(db: str, n: int = 3) -> list[str]:
    with session_factory(open_engine(db))() as s:
        ids = [
            str(stored_run(s, IMAGE, [CheckResult(check="k.one", status="pass")]).id)
            for _ in range(n)
        ]
        s.commit()
    return ids


@pytest.fixture
def store(store_db):
    return store_db, _runs(store_db)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(st.tuples(st.sampled_from(WRITES), st.integers(0, 2)), max_size=6))
def test_a_reader_learns_exactly_what_changed_after_its_mark(store, writes):
    db, runs = store
    factory = session_factory(open_engine(db))
    with factory() as s:
        then = changes.mark(s)
        s.rollback()
    expected = set()
    engine = open_engine(db)
    with engine.begin() as conn:
        for (_table, sql, of_a_run), i in writes:
            touched = conn.execute(text(sql), {"r": runs[i], "n": uuid.uuid4().hex}).rowcount
            if touched and of_a_run == "moved":
                expected |= {runs[i], min(r for r in runs if r > runs[i])}
            elif touched:
                expected.add(runs[i] if of_a_run else changes.OTHER)
    with factory() as s:
        assert changes.since(s, then) == expected


def test_every_table_of_the_schema_is_watched(store):
    db, _runs = store
    engine = open_engine(db)
    with engine.connect() as conn:
        if engine.dialect.name == "postgresql":
            sql = "SELECT DISTINCT event_object_table FROM information_schema.triggers"
        else:
            sql = "SELECT DISTINCT tbl_name FROM sqlite_master WHERE type = 'trigger'"
        watched = set(conn.execute(text(sql)).scalars())
    assert watched == set(metadata.tables) - {"store_change"}


def test_a_change_uncommitted_at_the_mark_is_found_once_committed(store):
    """A writer that has written but not committed when the reader takes its mark: what it
    wrote is found after that mark, however its number compares."""
    db, runs = store
    factory = session_factory(open_engine(db))
    writer = open_engine(db).connect()
    tx = writer.begin()
    writer.execute(text("UPDATE result SET message = 'late' WHERE run_id = :r"), {"r": runs[0]})
    if writer.dialect.name == "postgresql":  # a second writer, numbered after, commits first
        with open_engine(db).begin() as other:
            other.execute(text("UPDATE run SET state = 'done' WHERE id = :r"), {"r": runs[1]})
    marked: list[changes.Mark] = []

    def read() -> None:  # another connection, as a site build is
        with factory() as s:
            marked.append(changes.mark(s))

    reader = threading.Thread(target=read)
    reader.start()
    reader.join(timeout=30)
    tx.commit()
    writer.close()
    with factory() as s:
        found = changes.since(s, marked[0])
    # on PostgreSQL, runs[1] may be counted again (committed before the mark, but after the
    # oldest transaction then running began): more than changed, never less
    assert runs[0] in found and found <= {runs[0], runs[1]} and runs[2] not in found


def test_a_log_missing_a_trigger_gives_no_mark(store):
    db, _runs = store
    engine = open_engine(db)
    factory = session_factory(engine)
    with factory() as s:
        assert changes.mark(s) is not None
    drop = "DROP TRIGGER store_change_result_update"
    with engine.begin() as conn:
        conn.execute(text(drop + (" ON result" if engine.dialect.name == "postgresql" else "")))
    with factory() as s:
        assert changes.mark(s) is None  # an edit of a result would go unnoticed


@pytest.mark.postgres
def test_a_truncated_table_is_a_change(pg_server):
    """PostgreSQL's TRUNCATE, which fires no row trigger, notes a change not of one run
    (SQLite has none: its DELETE without WHERE fires the row triggers, as above)."""
    db = pg_server.create_database()
    upgrade(db)
    _runs(db)
    engine = open_engine(db)
    factory = session_factory(engine)
    with factory() as s:
        then = changes.mark(s)
    with engine.begin() as conn:
        conn.execute(text("TRUNCATE inventory"))
    with factory() as s:
        assert changes.since(s, then) == {changes.OTHER}
        assert changes.mark(s) is not None


def test_a_mark_reads_back_only_as_written():
    mark = changes.Mark(7, 12)
    assert changes.Mark.from_json(mark.to_json()) == mark
    assert changes.Mark.from_json({"seq": 7, "xmin": None}) == changes.Mark(7)
    for bad in (None, [], {"seq": "7"}, {"seq": 7.5}, {"seq": True}, {"seq": 1, "xmin": "x"}):
        assert changes.Mark.from_json(bad) is None
