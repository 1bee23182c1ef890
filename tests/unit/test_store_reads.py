"""The start-up reads (store/reads.py) are Core selects on any store: for any filter they
list exactly the runs an independent oracle (the rows filtered and sorted in Python) names,
with their statuses, and the plan's history is each (image, suite)'s newest measured
duration."""

from __future__ import annotations

import random
from datetime import datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlalchemy import insert, select

from orchestrator.store import reads, tables
from orchestrator.store.db import open_engine

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


@pytest.fixture(scope="module")
def conn(store):
    engine = open_engine(store)
    with engine.connect() as c:
        yield c
    engine.dispose()


def oracle(conn, which: reads.Listing) -> list[tuple]:
    """The runs ``which`` names, filtered and sorted in Python from every row."""
    run, img, hst = tables.run.c, tables.image.c, tables.host.c
    every = conn.execute(
        select(run.id, run.started, run.job, run.state, img.alias, img.digest, hst.name,
               img.reference)
        .join_from(tables.run, tables.image, run.image_id == img.id)
        .join(tables.host, run.host_id == hst.id)
    ).all()  # fmt: skip
    kept = [
        r[:7]
        for r in every
        if (which.image is None or which.image in (r[4], r[7]))
        and (which.job is None or r[2] == which.job)
        and (not which.states or r[3] in which.states)
        and (which.since is None or r[1] >= which.since)
    ]
    return sorted(kept, key=lambda r: (r[1], r[0]), reverse=True)[: which.limit]


@settings(max_examples=60)
@given(
    limit=st.integers(0, 90),
    image=st.sampled_from((None, "rocm63", "nvcr.io/torch:24.05", "cpu", "absent")),
    job=st.sampled_from((None, *JOBS, "absent")),
    states=st.lists(st.sampled_from(STATES), max_size=4),
    since=st.none() | st.integers(0, 45).map(lambda m: T0 + timedelta(minutes=m)),
)
def test_the_listing_is_what_the_filters_name(conn, limit, image, job, states, since):
    which = reads.Listing(limit, image, job, tuple(states), since)
    listed = reads.list_runs(conn, which)
    assert [tuple(line) for line in listed] == oracle(conn, which)
    assert all(isinstance(line.started, datetime) for line in listed)
    statuses = reads.listed_statuses(conn, which)
    ids = {line.id for line in listed}
    res, chk = tables.result.c, tables.check.c
    expected = sorted(
        (r[0], r[1], r[2], r[3], r[4])
        for r in conn.execute(
            select(res.run_id, chk.check_id, res.attempt, res.id, res.status).join_from(
                tables.result, tables.check, chk.id == res.check_pk
            )
        )
        if r[0] in ids
    )
    assert statuses == [(r[0], r[1], r[2], r[4]) for r in expected]


def test_the_running_metas_are_those_of_running_runs(conn):
    which = reads.Listing(limit=1000)
    running = {line.id for line in reads.list_runs(conn, which) if line.state == "running"}
    metas = reads.running_metas(conn, which)
    assert set(metas) == running and running
    assert not any("_owner" in m for m in metas.values())  # no run here names an owner


def test_suite_durations_are_the_newest_measured(store, conn):
    got = reads.suite_durations(conn)
    assert got and all(v > 0 for v in got.values())
    task, run, img = tables.task.c, tables.run.c, tables.image.c
    newest: dict = {}
    for alias, suite, timings in conn.execute(
        select(img.alias, task.suite, task.timings)
        .join_from(tables.task, tables.run, task.run_id == run.id)
        .join(tables.image, run.image_id == img.id)
        .where(task.state == "done")
        .order_by(task.id)
    ):
        if (timings or {}).get("total_s"):
            newest[(alias, suite)] = timings["total_s"]
    assert got == newest


def test_a_shown_run_is_named_by_its_id_or_a_unique_prefix(conn):
    shown = reads.shown(conn, "run-003")
    assert shown is not None and shown.run.id == "run-003"
    assert shown.run.alias in {alias for alias, _ in IMAGES} and shown.run.name in {"h1", "h2"}
    res = tables.result.c
    stored = conn.execute(select(res.attempt).where(res.run_id == "run-003").order_by(res.id))
    assert [r.attempt for r in shown.results] == [a for (a,) in stored]
    assert set(shown.timings) <= {"smoke", "kernels"} and len(shown.timings) == 1
    assert reads.shown(conn, "run-07") is None  # ten runs start so: none is chosen
    assert reads.shown(conn, "run-079").run.id == "run-079"
    assert reads.shown(conn, "run") is None and reads.shown(conn, "absent") is None


def test_baselines_are_listed_by_name(store):
    engine = open_engine(store)
    with engine.begin() as c:
        for name in ("zeta", "alpha"):
            c.execute(insert(tables.baseline).values(name=name, run_id="run-001", created=T0))
        assert [b[0] for b in reads.baselines(c)] == ["alpha", "zeta"]
        c.execute(tables.baseline.delete())
    engine.dispose()


def test_inventory_runs_are_the_runs_holding_one_newest_first(store):
    engine = open_engine(store)
    with engine.begin() as c:
        for rid in ("run-010", "run-020", "run-030"):
            c.execute(
                insert(tables.inventory).values(
                    run_id=rid, component="python", value="3.11", source="file"
                )
            )
        got = reads.inventory_runs(c, None, 50)
        assert {r.id for r in got} == {"run-010", "run-020", "run-030"}
        assert [r.started for r in got] == sorted((r.started for r in got), reverse=True)
        one = got[0]
        assert [r.id for r in reads.inventory_runs(c, one.reference, 50)] == [
            r.id for r in got if r.alias == one.alias
        ]
        assert len(reads.inventory_runs(c, None, 1)) == 1
        assert reads.inventory_runs(c, "absent", 50) == []
        c.execute(tables.inventory.delete())
    engine.dispose()
