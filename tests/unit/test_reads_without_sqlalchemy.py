"""The start-up reads (store/reads.py) are written once, as Core statements
(store/read_statements.py), and run two ways: on SQLAlchemy Core, and for a SQLite file at
this valorch's schema on the standard library's sqlite3, from the same statements compiled
ahead of time (store/compiled_reads.json, run by store/sqlite_reads.py). Both answer the same
for any filter; the compiled file is what the generator writes; anything but the plain case
is left to SQLAlchemy's open."""

from __future__ import annotations

import json
import random
import shutil
import sqlite3
import subprocess
import sys
from datetime import datetime, timedelta

import pytest
from conftest import ROOT
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlalchemy import insert

from orchestrator.store import reads, sqlite_reads, tables
from orchestrator.store.db import open_engine
from orchestrator.store.read_statements import STATEMENTS, CoreReads

GENERATOR = ROOT / "scripts" / "gen-compiled-reads.py"
STATES = ("running", "done", "failed", "interrupted")
JOBS = ("smoke", "nightly", "release")
IMAGES = (("rocm63", "rocm/pytorch:6.3"), ("cu124", "nvcr.io/torch:24.05"), ("cpu", "cpu:1"))
T0 = datetime(2026, 11, 1, 12, 0, 0)


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> str:
    """A store at this valorch's schema with 80 runs (equal start times among them, every
    state, three jobs and images, two hosts), their results over several attempts, and done
    and failed tasks with and without a total duration: seeded, always the same."""
    path = str(tmp_path_factory.mktemp("reads") / "v.sqlite")
    rng = random.Random(7)
    engine = open_engine(path)
    with engine.begin() as conn:
        for i, (alias, ref) in enumerate(IMAGES, 1):
            conn.execute(
                insert(tables.image).values(
                    id=i, alias=alias, reference=ref, backend="cpu", family="f", components={}
                )
            )
        for i in (1, 2):
            conn.execute(
                insert(tables.host).values(id=i, name=f"h{i}", fingerprint=str(i), spec={})
            )
        for i in (1, 2, 3):
            conn.execute(insert(tables.check).values(id=i, check_id=f"c.{i}", kind="feature"))
        for n in range(80):
            rid = f"run-{n:03d}"
            started = T0 + timedelta(minutes=rng.choice(range(40)), microseconds=rng.choice((0, 7)))
            conn.execute(
                insert(tables.run).values(
                    id=rid, batch="b", job=rng.choice(JOBS), image_id=rng.randint(1, 3),
                    host_id=rng.randint(1, 2), executor="docker", valorch_version="0",
                    spec_hash="x", cpu_only=False, started=started, state=rng.choice(STATES),
                    meta={},
                )
            )  # fmt: skip
            task_state = rng.choice(("done", "error"))
            timings = rng.choice(({}, {"total_s": round(rng.uniform(1, 99), 3)}, {"total_s": 0}))
            conn.execute(
                insert(tables.task).values(
                    run_id=rid, suite=rng.choice(("smoke", "kernels")), suite_spec={},
                    state=task_state, timings=timings,
                )
            )  # fmt: skip
            for check in rng.sample((1, 2, 3), rng.randint(0, 3)):
                for attempt in range(1, rng.randint(1, 3) + 1):
                    conn.execute(
                        insert(tables.result).values(
                            run_id=rid, check_pk=check, attempt=attempt,
                            status=rng.choice(("pass", "fail", "skip", "error")),
                        )
                    )  # fmt: skip
    engine.dispose()
    return path


def both(path: str, reading):
    engine = open_engine(path)
    try:
        with engine.connect() as conn:
            core = reading(CoreReads(conn))
    finally:
        engine.dispose()
    with sqlite_reads.opened(path) as plain:
        return core, reading(plain)


@settings(max_examples=60)
@given(
    limit=st.integers(0, 90),
    image=st.sampled_from((None, "rocm63", "nvcr.io/torch:24.05", "cpu", "absent")),
    job=st.sampled_from((None, *JOBS, "absent")),
    states=st.lists(st.sampled_from(STATES), max_size=4),
    since=st.none() | st.integers(0, 45).map(lambda m: T0 + timedelta(minutes=m)),
)
def test_sqlite3_and_sqlalchemy_list_the_same_runs_and_statuses(
    store, limit, image, job, states, since
):
    which = reads.Listing(limit, image, job, tuple(states), since)
    core, plain = both(store, lambda r: reads.list_runs(r, which))
    assert plain == core
    assert all(isinstance(line.started, datetime) for line in plain)
    core, statuses = both(store, lambda r: reads.listed_statuses(r, which))
    assert statuses == core
    assert {s[0] for s in statuses} <= {line.id for line in plain}


def listed(r, **kw):
    return reads.list_runs(r, reads.Listing(limit=1000, **kw))


def test_the_filters_filter(store):
    """Not only equal: each filter does what it says (an equal wrong answer would pass the
    property above)."""
    with sqlite_reads.opened(store) as r:
        every = listed(r)
        assert len(every) == 80
        assert every == sorted(every, key=lambda x: (x.started, x.id), reverse=True)
        assert {x.image for x in listed(r, image="nvcr.io/torch:24.05")} == {"cu124"}
        assert {x.job for x in listed(r, job="nightly")} == {"nightly"}
        got = listed(r, states=("done", "failed"))
        assert {x.state for x in got} == {"done", "failed"}
        cut = T0 + timedelta(minutes=20)
        assert min(x.started for x in listed(r, since=cut)) >= cut
        assert len(reads.list_runs(r, reads.Listing(5))) == 5


def test_suite_durations_are_the_same_and_the_newest(store):
    core, plain = both(store, reads.suite_durations)
    assert plain == core and plain
    assert all(v > 0 for v in plain.values())


def test_the_compiled_statements_are_what_the_generator_writes(tmp_path):
    done = subprocess.run(
        [sys.executable, str(GENERATOR), "--check"], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    stale = tmp_path / "compiled_reads.json"
    stale.write_text(sqlite_reads.COMPILED.read_text().replace("DESC", "ASC"))
    done = subprocess.run(
        [sys.executable, str(GENERATOR), "--check", "--out", str(stale)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 1 and "out of date" in done.stderr
    assert set(STATEMENTS) == set(json.loads(sqlite_reads.COMPILED.read_text())["statements"])


@pytest.mark.parametrize(
    ("db", "path"),
    [
        ("results/v.sqlite", "results/v.sqlite"),
        ("sqlite:///results/v.sqlite", "results/v.sqlite"),
        ("sqlite:////abs/v.sqlite", "/abs/v.sqlite"),
        ("sqlite:///v.sqlite?mode=ro", None),
        ("postgresql://u@h/db", None),
        (":memory:", None),
        ("sqlite://", None),
        ("a%20b.sqlite", None),
    ],
)
def test_only_a_plain_sqlite_file_is_read_without_sqlalchemy(db, path):
    assert sqlite_reads.sqlite_file(db) == path


def test_a_store_that_is_not_plain_is_left_to_sqlalchemy(store, tmp_path):
    with (
        pytest.raises(sqlite_reads.UnreadableError),
        sqlite_reads.opened(str(tmp_path / "none.sqlite")),
    ):
        pass
    assert not (tmp_path / "none.sqlite").exists()  # never created here
    older = tmp_path / "older.sqlite"
    shutil.copy(store, older)
    with sqlite3.connect(older) as conn:
        conn.execute("UPDATE alembic_version SET version_num = '0008'")
    with (
        pytest.raises(sqlite_reads.UnreadableError, match="not at schema"),
        sqlite_reads.opened(str(older)),
    ):
        pass
    damaged = tmp_path / "damaged.sqlite"
    shutil.copy(store, damaged)
    with sqlite3.connect(damaged) as conn:
        conn.execute("UPDATE run SET started = 'garbage' WHERE id = 'run-003'")
    with sqlite_reads.opened(str(damaged)) as r, pytest.raises(sqlite_reads.UnreadableError):
        listed(r)
    notadb = tmp_path / "notadb.sqlite"
    notadb.write_bytes(b"not a database at all" * 100)
    with pytest.raises(sqlite_reads.UnreadableError), sqlite_reads.opened(str(notadb)):
        pass
