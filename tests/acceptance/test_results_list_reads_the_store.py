"""`valorch results list` reads the store through its queries, whatever the file: the
newest runs first (a tie in start time broken by id), each with its final counts, an
image filter by alias or reference, and a file behind this valorch's schema upgraded and
listed. Real CLI on real SQLite files."""

import json
import sqlite3
from datetime import datetime, timedelta

import pytest

from orchestrator.spec import CheckResult, HostSpec, ImageSpec, SuiteRef
from orchestrator.store import queries
from orchestrator.store.db import open_engine, session_factory
from orchestrator.store.models import Run
from tests.conftest import run_cli


def _fill(db: str) -> list[str]:
    """Runs of two images with retries (flaky, a failure passed on retry), a run without
    results, and two runs that started at the same instant."""
    engine = open_engine(db)
    sessions = session_factory(engine)
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
    engine.dispose()
    return ids


def _listed(db, *args) -> list[dict]:
    r = run_cli("results", "list", "--json", *args, db=db)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_the_newest_runs_with_their_final_counts(tmp_path):
    db = tmp_path / "v.sqlite"
    ids = _fill(str(db))
    rows = {r["run"]: r for r in _listed(db)}
    assert set(rows) == set(ids)
    assert rows[ids[1]]["counts"] == {
        "pass": 1,
        "flaky": 1,
        "crash": 1,
        "timeout": 1,
        "unsupported": 1,
    }
    assert rows[ids[3]]["counts"] == {}  # a run without results
    newest = [r["run"] for r in _listed(db, "--limit", "3")]
    assert newest == [max(ids[5], ids[6]), min(ids[5], ids[6]), ids[4]]  # the tie broken by id


@pytest.mark.parametrize(
    "image,expected", [("img1", {1, 3, 5}), ("reg.example/img:0", {0, 2, 4, 6}), ("none", set())]
)
def test_an_image_by_alias_or_reference(tmp_path, image, expected):
    db = tmp_path / "v.sqlite"
    ids = _fill(str(db))
    assert {r["run"] for r in _listed(db, "--image", image)} == {ids[i] for i in expected}


def test_a_file_behind_this_schema_is_upgraded_and_listed(tmp_path):
    db = tmp_path / "v.sqlite"
    ids = _fill(str(db))
    with sqlite3.connect(db) as conn:  # as a valorch at 0003 left it (0004 is additive)
        conn.execute("UPDATE alembic_version SET version_num = '0003'")
    assert {r["run"] for r in _listed(db)} == set(ids)
    assert {r["run"] for r in _listed(f"sqlite:///{db}")} == set(ids)  # a URL reads the same
