"""The read-only fast path of `valorch results list` (store.lite) gives exactly what the
SQLAlchemy path gives, on the same files, and declines every file it must not read."""

import json
import sqlite3
from datetime import datetime, timedelta

import pytest

from orchestrator.services import run_list
from orchestrator.spec import CheckResult, HostSpec, ImageSpec, SuiteRef
from orchestrator.store import lite, queries
from orchestrator.store.db import HEAD, open_engine, session_factory
from orchestrator.store.models import Run
from tests.conftest import run_cli


def _fill(db: str) -> list[str]:
    """Runs of two images with retries (flaky, a failure passed on retry), runs without
    results, and two runs that started at the same instant (the tie is broken by id)."""
    sessions = session_factory(open_engine(db))
    t0 = datetime(2026, 1, 1, 12)
    ids = []
    with sessions() as s:
        for i in range(7):
            image = ImageSpec(
                alias=f"img{i % 2}", reference=f"reg.example/img:{i % 2}", backend="cpu"
            )
            run = queries.start_run(
                s,
                batch=f"b{i}",
                job="nightly" if i % 3 else "adhoc",
                image=image,
                digest=f"sha256:{i % 2:064x}",
                host=HostSpec(name=f"h{i % 3}"),
                executor="docker",
                spec_hash="x",
                cpu_only=False,
                suites=[SuiteRef(name="smoke")],
            )
            s.flush()
            s.get(Run, run.id).started = t0 + timedelta(minutes=min(i, 5))  # runs 5 and 6 tie
            if i != 3:
                queries.add_results(
                    s,
                    run.id,
                    None,
                    [
                        CheckResult(check="k.a", status="pass"),
                        CheckResult(check="k.b", status="fail"),
                        CheckResult(check="k.b", status="pass", attempt=2),
                        CheckResult(check="k.c", status=("fail", "crash", "skip")[i % 3]),
                        CheckResult(check="k.d", status="timeout"),
                        CheckResult(check="k.d", status="timeout", attempt=2),
                        CheckResult(check=f"k.only{i}", status="unsupported"),
                    ],
                )
            ids.append(run.id)
        s.commit()
    return ids


def _both(monkeypatch, db: str, limit: int, image: str | None) -> tuple[list, list]:
    fast = run_list.listing(db, limit, image)
    with monkeypatch.context() as m:
        m.setattr(lite, "connect", lambda _db: None)
        slow = run_list.listing(db, limit, image)
    return fast, slow


@pytest.mark.parametrize(
    "limit,image",
    [
        (50, None),
        (3, None),
        (6, None),
        (50, "img1"),
        (50, "reg.example/img:0"),
        (2, "img0"),
        (50, "nothing"),
    ],
)
def test_fast_listing_equals_the_sqlalchemy_listing(tmp_path, monkeypatch, limit, image):
    db = str(tmp_path / "v.sqlite")
    _fill(db)
    assert lite.connect(db) is not None  # the fast path is taken
    fast, slow = _both(monkeypatch, db, limit, image)
    assert fast == slow
    assert len(fast) == min(
        limit, {None: 7, "img1": 3, "reg.example/img:0": 4, "img0": 4, "nothing": 0}[image]
    )


def test_fast_listing_counts_final_verdicts(tmp_path):
    db = str(tmp_path / "v.sqlite")
    ids = _fill(db)
    rows = {r["run"]: r for r in run_list.listing(f"sqlite:///{db}", 50, None)}
    assert dict(rows[ids[1]]["counts"]) == {
        "pass": 1,
        "flaky": 1,
        "crash": 1,
        "timeout": 1,
        "unsupported": 1,
    }
    assert dict(rows[ids[3]]["counts"]) == {}  # a run without results
    newest = [r["run"] for r in run_list.listing(db, 3, None)]
    assert newest == [max(ids[5], ids[6]), min(ids[5], ids[6]), ids[4]]  # the tie broken by id


def test_the_cli_prints_the_same_either_way(tmp_path, monkeypatch):
    db = tmp_path / "v.sqlite"
    _fill(str(db))
    fast = json.loads(run_cli("results", "list", "--json", db=db).stdout)
    # an older schema number declines the fast path; the SQLAlchemy path reads the same rows
    slow, _ = _both(monkeypatch, str(db), 50, None)
    assert fast == [
        {**r, "started": r["started"].isoformat(), "counts": dict(r["counts"])} for r in slow
    ]


def test_declines_what_it_must_not_read(tmp_path):
    db = tmp_path / "v.sqlite"
    _fill(str(db))
    assert lite.connect(str(tmp_path / "missing.sqlite")) is None  # SQLAlchemy creates it
    assert lite.connect("postgresql://valorch@127.0.0.1/valorch") is None
    assert lite.connect(f"sqlite:///{db}?mode=ro") is None  # URL options: SQLAlchemy's business
    lock = tmp_path / "v.sqlite.migrate-lock"
    lock.write_text("")
    assert lite.connect(str(db)) is None  # a migration may be under way
    lock.unlink()
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE alembic_version SET version_num = '0003'")
    assert lite.connect(str(db)) is None  # behind head: SQLAlchemy upgrades it
    not_db = tmp_path / "notes.txt"
    not_db.write_text("not a database\n" * 100)
    assert lite.connect(str(not_db)) is None
    assert lite.local_path(None).name == "valorch.sqlite"
    assert HEAD == "0008"


def test_a_file_behind_head_is_upgraded_and_listed(tmp_path):
    db = tmp_path / "v.sqlite"
    ids = _fill(str(db))
    with sqlite3.connect(db) as conn:  # as a valorch at 0003 left it (0004 is additive)
        conn.execute("UPDATE alembic_version SET version_num = '0003'")
    r = run_cli("results", "list", "--json", db=db)
    assert r.returncode == 0, r.stderr
    assert {x["run"] for x in json.loads(r.stdout)} == set(ids)


def test_the_plans_history_is_read_the_same_either_way(tmp_path):
    """`valorch run` reads the last duration of each (image, suite) here before the store
    is opened; the same as store.queries.suite_durations on the same file, newest first,
    tasks without a total or not done left out."""
    from orchestrator.spec import Execution, Task
    from orchestrator.store import queue as tq
    from orchestrator.store.models import TaskRow

    db = str(tmp_path / "v.sqlite")
    _fill(db)
    sessions = session_factory(open_engine(db))
    with sessions() as s:
        tasks = s.query(TaskRow).order_by(TaskRow.id).all()
        for i, row in enumerate(tasks):
            run = s.get(Run, row.run_id)
            task = Task(
                image=ImageSpec(
                    alias=run.image.alias, reference=run.image.reference, backend="cpu"
                ),
                suite=SuiteRef(name="smoke"),
                host=HostSpec(name=run.host.name),
                checks=(),
            )
            if i == 2:
                continue  # still queued
            timings = {} if i == 4 else {"total_s": 10.0 + i, "run_s": 1.0}
            tq.complete(s, row.run_id, row.id, task, Execution(results=(), timings=timings))
        s.commit()
        slow = queries.suite_durations(s)
    conn = lite.connect(db)
    assert conn is not None
    fast = lite.suite_durations(conn)
    assert fast == slow == {("img0", "smoke"): 16.0, ("img1", "smoke"): 15.0}
    assert lite.suite_durations(conn, limit=1) == queries.suite_durations(sessions(), limit=1)
