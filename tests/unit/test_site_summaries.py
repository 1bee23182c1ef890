"""The samples' summaries made by a second process while the site build reads the results
(orchestrator/ext/site/summaries.py) are only an optimisation: whatever that process
does (summarises every result, some, none, ends half-way through a frame, cannot start),
the runs the build reads are the same as without it, to the last float, and it is gone
when the read ends."""

from __future__ import annotations

import math
import os
import sqlite3
import subprocess
from datetime import datetime, timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import create_engine
from sqlalchemy.orm import Session

from orchestrator.ext.site import summaries as summaries_mod
from orchestrator.ext.site.summaries import FRAME, Summaries
from orchestrator.ext.site.views import load_runs
from orchestrator.spec import CheckResult, ImageSpec
from orchestrator.store import site_queries
from orchestrator.store.db import open_engine, session_factory
from tests.store_helpers import stored_run

T0 = datetime(2026, 1, 1)
IMAGE = ImageSpec(alias="img_a", reference="acme/img:a", backend="cpu")

timings = st.floats(min_value=-1.0, max_value=10.0, allow_nan=False)
results = st.lists(
    st.tuples(
        st.sampled_from(["pass", "pass", "pass", "fail", "error"]),
        st.one_of(st.none(), st.lists(timings, max_size=12)),  # none, too few, enough
    ),
    min_size=1,
    max_size=40,
)


def _store(path, runs):
    factory = session_factory(open_engine(str(path)))
    for i, rows in enumerate(runs):
        with factory() as s:
            run = stored_run(
                s,
                IMAGE,
                [
                    CheckResult(
                        check=f"kernels.op{j:03d}",
                        status=status,
                        kind="kernel",
                        samples=tuple(samples or ()),
                        unit="s",
                    )
                    for j, (status, samples) in enumerate(rows)
                ],
                batch=f"b{i:03d}",
            )
            run.started, run.state = T0 + timedelta(hours=i), "done"
            s.commit()
    return factory


def _read(factory, made):
    with factory() as s:
        try:
            return load_runs(
                site_queries.runs(s), site_queries.checks(s), site_queries.results(s), made
            )
        finally:
            if made is not None:
                made.close()


def _source(factory):
    with factory() as s:
        return site_queries.passing_samples_source(s)


def _same(a, b):
    assert a.keys() == b.keys()
    for rid in a:
        assert a[rid].results == b[rid].results  # every field, the floats exactly


@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(runs=st.lists(results, min_size=1, max_size=4))
def test_the_runs_read_are_the_same_with_the_second_process(tmp_path_factory, runs):
    path = tmp_path_factory.mktemp("summaries") / "s.sqlite"
    factory = _store(path, runs)
    made = Summaries(_source(factory))
    assert made.proc is not None
    _same(_read(factory, None), _read(factory, made))
    assert made.proc is None  # closed, and waited for


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """Enough timed results for several frames, some without a CV (a median ≤ 0); read only."""
    runs = [
        [("pass", [(i % 7 - 1) * 1e-3 + k * 1e-5 for k in range(10)]) for i in range(2200)]
        for _ in range(3)
    ]
    return _store(tmp_path_factory.mktemp("frames") / "s.sqlite", runs)


def test_several_frames_and_a_result_without_cv(store):
    made = Summaries(_source(store))
    got = _read(store, made)
    _same(_read(store, None), got)
    assert sum(1 for r in got.values() for res in r.results.values() if res.cv is None) > 0
    assert FRAME < 6600  # more than one frame came


def test_results_the_process_leaves_out_are_made_here(store):
    """As where the store changed between the two reads: the process sees every other result."""
    path, sql = _source(store)
    odd = sql.replace("ORDER BY", "AND result.id % 2 = 1 ORDER BY")
    assert odd != sql
    _same(_read(store, None), _read(store, Summaries((path, odd))))


def test_a_process_that_fails_or_cannot_start_leaves_it_all_here(store, tmp_path):
    expected = _read(store, None)
    path, sql = _source(store)
    _same(expected, _read(store, Summaries((str(tmp_path / "absent.sqlite"), sql))))
    _same(expected, _read(store, Summaries((path, "SELECT no_such_column FROM result"))))


def test_a_process_ending_inside_a_frame_leaves_the_rest_here(store, monkeypatch):
    """Frames cut short (a process killed while it wrote): what came whole is used."""
    expected = _read(store, None)
    made = Summaries(_source(store))
    real = made._read
    budget = [FRAME * summaries_mod._ITEM + summaries_mod._HEAD.size + 1000]

    def cut(size):
        budget[0] -= size
        return real(size) if budget[0] >= 0 else None

    monkeypatch.setattr(made, "_read", cut)
    _same(expected, _read(store, made))


def test_a_store_that_is_not_a_file_has_no_second_process():
    with Session(create_engine("sqlite://")) as s:
        assert site_queries.passing_samples_source(s) is None
    assert Summaries(None).get(1) is None


def test_the_second_process_imports_no_sqlalchemy(store):
    """It starts in milliseconds: the standard library and three small modules of valorch."""
    argv = summaries_mod.command(*_source(store))
    argv[1:1] = ["-X", "importtime"]  # after the interpreter, before its -I
    proc = subprocess.run(argv, capture_output=True, timeout=60)
    assert proc.returncode == 0 and len(proc.stdout) > FRAME
    imported = {line.split("|")[-1].strip() for line in proc.stderr.decode().splitlines()}
    assert "orchestrator.ext.site.quartiles" in imported
    assert not {m for m in imported if m.startswith(("sqlalchemy", "pydantic", "jinja2"))}


def test_a_file_in_the_working_directory_shadows_nothing(store, tmp_path, monkeypatch):
    """The process is started in the user's directory: a module file there is not imported."""
    (tmp_path / "struct.py").write_text("raise SystemExit(7)\n")
    (tmp_path / "orchestrator").mkdir()
    (tmp_path / "orchestrator" / "__init__.py").write_text("raise SystemExit(8)\n")
    monkeypatch.chdir(tmp_path)
    proc = subprocess.run(summaries_mod.command(*_source(store)), capture_output=True, timeout=60)
    assert proc.returncode == 0 and len(proc.stdout) > FRAME, proc.stderr[-500:]


def test_the_process_reads_the_store_read_only(store):
    """A read-only connection: the store's file is never written by it."""
    path, sql = _source(store)
    before = os.stat(path).st_mtime_ns
    made = Summaries((path, sql))
    while made.upto != math.inf:
        made._frame()
    assert os.stat(path).st_mtime_ns == before
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
