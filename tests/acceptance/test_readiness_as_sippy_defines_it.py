"""Readiness as Sippy's Component Readiness decides it, through the real CLI, on a store of
known runs written directly (the run is not the point here; readiness_support.py stages real
`valorch run` runs): a total regression is red with scipy's p-value, tiny and unequal sides
are compared as they are, no evidence is never "ready", a version or baseline basis gives
real counts, a renamed check is followed, a flaky run counts once, an accepted regression
shows as accepted and is not the new basis, and bad windows and thresholds exit 2."""

from __future__ import annotations

import json
import sqlite3
import sys
from datetime import timedelta
from pathlib import Path

import pytest
from scipy.stats import fisher_exact

from orchestrator.spec import CheckResult, CommandSpec, HostSpec, ImageSpec, SuiteRef
from orchestrator.store import queries
from orchestrator.store.db import open_engine, session_factory

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from conftest import run_cli

IMAGE = ImageSpec(alias="host", reference="host", backend="cpu")
DAY = timedelta(days=1)


def _suite(ids_argv: dict[str, list[str]]) -> SuiteRef:
    return SuiteRef(
        name="command",
        commands=tuple(CommandSpec(id=i, argv=tuple(a)) for i, a in ids_argv.items()),
    )


def _run(s, job, days_ago, results, suite=None):
    """A finished run of ``job`` ``days_ago`` days back: (check, [statuses by attempt])."""
    run = queries.start_run(
        s,
        batch=f"{job}-{days_ago}",
        job=job,
        image=IMAGE,
        digest=None,
        host=HostSpec(name="h1"),
        executor="host",
        spec_hash="x",
        cpu_only=False,
        suites=[suite] if suite else [],
    )
    s.flush()
    task = run.tasks[0].id if suite else None
    queries.add_results(
        s,
        run.id,
        task,
        [
            CheckResult(check=check, status=st, attempt=i + 1)
            for check, statuses in results
            for i, st in enumerate(statuses)
        ],
    )
    when = queries.now() - timedelta(days=days_ago)
    run.state, run.started, run.ended = "done", when, when + timedelta(seconds=3)
    return run.id


def _spread(n, lo, hi):
    """n run ages spread over (lo, hi) days ago."""
    return [lo + (hi - lo) * (i + 0.5) / n for i in range(n)]


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    db = tmp_path_factory.mktemp("sippy") / "valorch.sqlite"
    factory = session_factory(open_engine(str(db)))
    ids: dict[str, list[str]] = {}
    with factory() as s:
        # 4/4 -> 0/4, and a steady check beside it
        for age in _spread(4, 1, 7):
            _run(s, "total", age + 7, [("smoke.a", ["pass"]), ("smoke.b", ["pass"])])
        for age in _spread(4, 0, 7):
            _run(s, "total", age, [("smoke.a", ["fail"]), ("smoke.b", ["pass"])])
        # 100/100 -> 0/3
        for age in _spread(100, 0, 7):
            _run(s, "hundred", age + 7, [("smoke.a", ["pass"])])
        for age in _spread(3, 0, 7):
            _run(s, "hundred", age, [("smoke.a", ["fail"])])
        # only old runs: nothing in the candidate window
        for age in _spread(4, 0, 7):
            _run(s, "stale", age + 7, [("smoke.a", ["pass"])])
        # renamed: command.old passed 10/10, command.new (the same argv) fails 0/10
        old, new = _suite({"old": ["false", "x"]}), _suite({"new": ["false", "x"]})
        for age in _spread(10, 0, 7):
            _run(s, "renamed", age + 7, [("command.old", ["pass"])], old)
        for age in _spread(10, 0, 7):
            _run(s, "renamed", age, [("command.new", ["fail"])], new)
        # flaky: each candidate run failed, then passed on its retry
        for age in _spread(4, 0, 7):
            _run(s, "flaky", age + 7, [("smoke.a", ["pass"])])
        for age in _spread(4, 0, 7):
            _run(s, "flaky", age, [("smoke.a", ["fail", "pass"])])
        # accepted: passing 14-21 days ago; failing since (accepted 14 days ago)
        for age in _spread(6, 14, 21):
            _run(s, "accepted", age, [("smoke.a", ["pass"])])
        for age in _spread(6, 7, 14):
            _run(s, "accepted", age, [("smoke.a", ["fail"])])
        for age in _spread(6, 0, 7):
            _run(s, "accepted", age, [("smoke.a", ["fail"])])
        # a published version / baseline: the basis run 10-11 days ago, published before the
        # candidate runs exist (a version records the runs it was built from)
        ids["version"] = [
            _run(s, "ver", age, [("smoke.a", ["pass"]), ("smoke.b", ["pass"])])
            for age in _spread(1, 10, 11)
        ]
        s.commit()
    assert run_cli("matrix", "publish", "--job", "ver", "--version", "ver-1", db=db).returncode == 0
    assert run_cli("baseline", "set", "ver-run", ids["version"][0], db=db).returncode == 0
    assert run_cli("baseline", "set", "ver-mv", "ver-1", db=db).returncode == 0
    with factory() as s:
        for age in _spread(4, 0, 7):
            _run(s, "ver", age, [("smoke.a", ["fail"]), ("smoke.b", ["pass"])])
        s.commit()
    return db


def ready(db, job, *args, basis="window:7d"):
    return run_cli("readiness", "--job", job, "--basis", basis, "--window", "7d", *args, db=db)


def cells(proc) -> dict[str, dict]:
    return {c["check"]: c for c in json.loads(proc.stdout)["cells"]}


def test_four_of_four_to_none_of_four_is_an_extreme_regression_with_scipys_p(store):
    proc = ready(store, "total", "--json")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["verdict"] == "not ready" and doc["exit_code"] == 1
    a = cells(proc)["smoke.a"]
    assert a["status"] == "extreme regression" and a["gating"] is True
    assert a["candidate"] == {"passed": 0, "runs": 4} and a["basis"] == {"passed": 4, "runs": 4}
    want = fisher_exact([[0, 4], [4, 0]], alternative="less")[1]
    assert a["p"] == pytest.approx(want, rel=1e-12) and a["q"] is None  # no correction
    assert cells(proc)["smoke.b"]["status"] == "not significant"
    text = ready(store, "total")
    assert text.returncode == 1
    assert "EXTREME REGRESSION  smoke.a  host@cpu  candidate 0/4  basis 4/4" in text.stdout
    assert "environments: host@cpu (backend cpu" in text.stdout
    assert "[cpu, cpu]" not in text.stdout and "NOT READY (exit 1)" in text.stdout
    # the optional correction never hides a drop over the extreme threshold
    assert ready(store, "total", "--correction", "bh").returncode == 1


def test_a_hundred_passes_then_three_failures_is_red(store):
    proc = ready(store, "hundred", "--json")
    assert proc.returncode == 1, proc.stderr
    a = cells(proc)["smoke.a"]
    assert a["status"] == "extreme regression"
    assert a["basis"]["runs"] == 100 and a["candidate"] == {"passed": 0, "runs": 3}
    assert a["p"] == pytest.approx(fisher_exact([[0, 3], [100, 0]], alternative="less")[1])
    # Sippy's minimum of sample failures: with --min-fail 4 three failures are not significant
    assert ready(store, "hundred", "--min-fail", "4").returncode == 0


def test_no_candidate_runs_is_not_ready_naming_allow_empty(store):
    proc = ready(store, "stale")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "no candidate runs" in proc.stderr and "--allow-empty" in proc.stderr
    assert "NOT READY" in proc.stdout
    allowed = ready(store, "stale", "--allow-empty")
    assert allowed.returncode == 0 and "allowed by --allow-empty" in allowed.stderr
    # an empty basis window is not ready either (not a usage error)
    empty = ready(store, "stale", "--window", "9d", basis="window:1h")
    assert empty.returncode == 1 and "empty basis" in empty.stderr


@pytest.mark.parametrize("basis", ["ver-1", "ver-mv", "ver-run"])
def test_a_version_or_baseline_basis_counts_its_runs(store, basis):
    proc = ready(store, "ver", "--json", basis=basis)
    doc = json.loads(proc.stdout)
    assert doc["basis_runs"] == 1, doc
    got = cells(proc)
    assert got["smoke.a"]["basis"] == {"passed": 1, "runs": 1}
    assert got["smoke.a"]["candidate"] == {"passed": 0, "runs": 4}
    # 1/1 -> 0/4: p = 0.2 by Fisher; Sippy calls it not significant, and so do we
    assert got["smoke.a"]["status"] == "not significant" and proc.returncode == 0
    assert got["smoke.a"]["p"] == pytest.approx(fisher_exact([[0, 4], [1, 0]], "less")[1])


def test_a_version_of_another_job_has_no_overlapping_cell(store):
    proc = ready(store, "renamed", basis="ver-1")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "MISSING SAMPLE" in proc.stdout and "MISSING BASIS" in proc.stdout
    assert "no cell was tested" in proc.stderr and "--allow-empty" in proc.stderr


def test_a_renamed_check_is_followed(store):
    proc = ready(store, "renamed", "--json")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    (new,) = json.loads(proc.stdout)["cells"]
    assert new["check"] == "command.new" and new["status"] == "extreme regression"
    assert new["basis"] == {"passed": 10, "runs": 10}
    assert new["notes"] == ["renamed from command.old (the same declaration)"]


def test_a_flaky_run_counts_once_as_a_pass(store):
    proc = ready(store, "flaky", "--json")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    a = cells(proc)["smoke.a"]
    assert a["candidate"] == {"passed": 4, "runs": 4} and a["status"] == "not significant"


def test_an_accepted_regression_is_shown_accepted_and_is_not_the_new_basis(store, tmp_path):
    db = tmp_path / "acc.sqlite"
    with sqlite3.connect(store) as src, sqlite3.connect(db) as dst:
        src.backup(dst)  # the store's WAL included
    before = ready(db, "accepted", "--json")
    assert before.stdout, before.stderr
    a = cells(before)["smoke.a"]
    # the basis window (7-14 days ago) held the failures; before any acceptance, it is the basis
    assert a["basis"] == {"passed": 0, "runs": 6} and before.returncode == 0
    added = run_cli(
        "accept", "add", "smoke.a", "--env", "host@cpu", "--reason", "upstream bug 7",
        "--by", "alice", "--until", "2099-01-01", db=db,
    )  # fmt: skip
    assert added.returncode == 0, added.stderr
    con = sqlite3.connect(db)  # recorded when the regression began, 14 days ago
    con.execute(
        "update acceptance set created = ?",
        ((queries.now() - timedelta(days=14)).isoformat(sep=" "),),
    )
    con.commit()
    con.close()
    after = ready(db, "accepted", "--json")
    assert after.returncode == 0, after.stdout + after.stderr
    a = cells(after)["smoke.a"]
    assert a["basis"] == {"passed": 6, "runs": 6}  # looked further back, past the acceptance
    assert a["status"] == "extreme regression" and a["gating"] is False
    assert a["accepted"]["live"] is True and a["accepted"]["by"] == "alice"
    assert any("accepted regression #1" in n for n in a["notes"])
    text = ready(db, "accepted")
    assert "EXTREME REGRESSION (ACCEPTED)" in text.stdout and "accepted by alice" in text.stdout
    # expired: the same cell gates again
    con = sqlite3.connect(db)
    con.execute("update acceptance set until = ?", ((queries.now() - DAY).isoformat(sep=" "),))
    con.commit()
    con.close()
    assert ready(db, "accepted").returncode == 1


@pytest.mark.parametrize(
    ("args", "flag"),
    [
        (("--window", "99999999999999w"), "--window"),
        (("--basis", "window:99999999999999w"), "--basis"),
        (("--confidence", "100"), "--confidence"),
        (("--confidence", "0"), "--confidence"),
        (("--alpha", "1"), "--alpha"),
        (("--pity", "-1"), "--pity"),
        (("--extreme", "-5"), "--extreme"),
        (("--min-fail", "-1"), "--min-fail"),
        (("--correction", "bonferroni"), "--correction"),
        (("--confidence", "90", "--alpha", "0.1"), "--confidence"),
    ],
)
def test_bad_input_exits_2_naming_the_flag(store, args, flag):
    proc = run_cli("readiness", "--job", "total", "--basis", "window:7d", *args, db=store)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert flag in proc.stderr and "Traceback" not in proc.stderr


REAL_JOB = """\
name: ready-real
images: [host]
suites:
  - name: smoke
  - name: command
    commands:
      - id: flag-present
        argv: [test, -e, {flag}]
"""


def test_real_runs_four_passes_then_four_failures_is_not_ready(tmp_path):
    """The release engineer's case, with real `valorch run --repeat 4` runs on the host: a
    command check passes 4 runs (moved 8 days back), then fails 4; the smoke checks the host
    cannot run are skipped in every run and are one line, not rows."""
    from readiness_support import shift_back

    db, flag, job = tmp_path / "v.sqlite", tmp_path / "flag", tmp_path / "ready.yaml"
    job.write_text(REAL_JOB.format(flag=flag))
    args = ("run", "--job", str(job), "--repeat", "4", "--no-matrix", "--no-gate")
    flag.touch()
    assert run_cli(*args, db=db).returncode == 0
    shift_back(db, 8)
    flag.unlink()
    run_cli(*args, db=db)
    proc = run_cli("readiness", "--job", "ready-real", "--basis", "window:7d", db=db)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    line = next(x for x in proc.stdout.splitlines() if "command.flag-present" in x)
    assert "EXTREME REGRESSION" in line and "candidate 0/4  basis 4/4" in line
    assert f"p={fisher_exact([[0, 4], [4, 0]], alternative='less')[1]:.3g}" in line
    assert "0/0" not in proc.stdout and "[cpu, cpu]" not in proc.stdout
    skipped = next(x for x in proc.stdout.splitlines() if "no counted run on either side" in x)
    assert int(skipped.split()[0]) > 0
    assert "not ready: job ready-real: extreme regression" in proc.stderr
