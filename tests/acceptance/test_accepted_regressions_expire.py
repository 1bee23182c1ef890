"""Accepting a regression is a written, expiring record: `valorch accept add` stores who, why,
until when and the pass rate expected; `accept list` lists it; readiness keeps the cell red
with the acceptance beside it and stops gating on it; an expired acceptance (or a pass rate
below the accepted one) gates again; qualify --readiness gates before and after. Real runs
of a flaky command check (tests/acceptance/readiness_support.py)."""

from __future__ import annotations

import json
import shutil
import sqlite3
import sys
from datetime import datetime, timezone
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from conftest import run_cli
from readiness_support import FAILS, RUNS, store_fixture  # noqa: F401  # the store fixture


@pytest.fixture
def db(store, tmp_path):
    """A private copy of the shared store: acceptances recorded here stay here."""
    copy = tmp_path / "valorch.sqlite"
    shutil.copy(store[0], copy)
    return copy


def accept(db, *args):
    return run_cli("accept", "add", "command.wobbly", *args, db=db)


GOOD = ("--env", "host@cpu", "--reason", "tracked upstream, fix in the next image", "--by", "alice")


def readiness(db):
    return run_cli("readiness", "--job", "readiness-flaky", "--basis", "window:7d", "--json", db=db)


def wobbly(proc) -> dict:
    return next(c for c in json.loads(proc.stdout)["cells"] if c["check"] == "command.wobbly")


def test_record_list_gate_and_expire(db):
    before = readiness(db)
    assert before.returncode == 1 and wobbly(before)["accepted"] is None
    added = accept(db, *GOOD, "--until", "2099-01-01", "--expected-rate", "0.2")
    assert added.returncode == 0, added.stderr
    listed = run_cli("accept", "list", "--json", db=db)
    (row,) = json.loads(listed.stdout)
    assert row["by"] == "alice" and row["expected_rate"] == 0.2 and row["live"] is True
    assert row["until"].startswith("2099-01-01") and row["env"] == "host@cpu"
    after = readiness(db)
    assert after.returncode == 0, after.stdout + after.stderr
    cell = wobbly(after)
    assert cell["status"] == "extreme regression"  # accepting is not editing: it stays one
    assert cell["gating"] is False
    assert cell["accepted"]["live"] is True and cell["accepted"]["by"] == "alice"
    assert "1 regressed cell accepted" in after.stderr
    text = run_cli("readiness", "--job", "readiness-flaky", "--basis", "window:7d", db=db).stdout
    assert "accepted by alice until 2099-01-01" in text
    assert "EXTREME REGRESSION (ACCEPTED)" in text
    # the acceptance expires (moved into the past in the store): the cell gates again
    con = sqlite3.connect(db)
    con.execute("update acceptance set until = '2020-01-01 00:00:00.000000'")
    con.commit()
    con.close()
    expired = readiness(db)
    assert expired.returncode == 1
    assert wobbly(expired)["accepted"]["live"] is False
    assert "expired" in wobbly(expired)["accepted"]["why"]
    assert "(expired)" in run_cli("accept", "list", db=db).stdout


def test_until_today_covers_today_and_a_revoked_acceptance_gates_again(db):
    """--until is a whole day, UTC, inclusive: today's date covers the rest of today; a
    revoked acceptance excuses nothing (readiness reads acceptances without it)."""
    today = datetime.now(timezone.utc).date().isoformat()
    assert accept(db, *GOOD, "--until", today).returncode == 0
    covered = readiness(db)
    assert covered.returncode == 0, covered.stdout + covered.stderr
    assert wobbly(covered)["accepted"]["live"] is True
    gone = run_cli("accept", "revoke", "1", "--by", "bob", "--reason", "by mistake", db=db)
    assert gone.returncode == 0, gone.stderr
    after = readiness(db)
    assert after.returncode == 1 and wobbly(after)["accepted"] is None


def test_a_pass_rate_below_the_accepted_one_gates_again(db):
    rate = (RUNS - FAILS) / RUNS
    assert accept(db, *GOOD, "--until", "2099-01-01", "--expected-rate", "0.9").returncode == 0
    proc = readiness(db)
    assert proc.returncode == 1
    assert f"{rate:.0%} is below the accepted 90%" in wobbly(proc)["accepted"]["why"]


def test_an_acceptance_for_another_environment_does_not_apply(db):
    other = ("--env", "rocm_*", *GOOD[2:], "--allow-unseen")  # no ROCm run is stored yet
    assert accept(db, *other, "--until", "2099-01-01").returncode == 0
    proc = readiness(db)
    assert proc.returncode == 1 and wobbly(proc)["accepted"] is None


@pytest.mark.parametrize(
    ("args", "flag"),
    [
        (("--env", "host", "--by", "bob", "--until", "2099-01-01"), "--reason"),
        (("--env", "host", "--reason", " ", "--by", "bob", "--until", "2099-01-01"), "--reason"),
        (("--env", "host", "--reason", "x", "--by", "bob", "--until", "2020-01-01"), "--until"),
        (("--env", "host", "--reason", "x", "--by", "bob", "--until", "someday"), "--until"),
        (
            (
                "--env",
                "host",
                "--reason",
                "x",
                "--by",
                "bob",
                "--until",
                "2099-01-01",
                "--expected-rate",
                "1.5",
            ),
            "--expected-rate",
        ),
    ],
)
def test_bad_acceptances_exit_2_naming_the_flag(db, args, flag):
    proc = accept(db, *args)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert flag in proc.stderr and "Traceback" not in proc.stderr
    assert json.loads(run_cli("accept", "list", "--json", db=db).stdout) == []


def test_qualify_gates_on_readiness_before_and_after_the_acceptance(db, store, tmp_path):
    """The run qualify adds passes and its diff against an older passing run qualifies; the
    readiness gate fails it until the regression is accepted."""
    _db, job, older = store
    args = (
        "qualify",
        "--job",
        str(job),
        "--baseline",
        older[0],
        "--executor",
        "host",
        "--readiness",
        "window:7d",
    )
    issues = tmp_path / "known-issues.yaml"
    issues.write_text(
        "issues:\n  - check: command.steady\n    backend: cpu\n    reason: was slow once\n"
    )
    before = run_cli(*args, "--known-issues", str(issues), "--out-dir", str(tmp_path / "q1"), db=db)
    assert before.returncode == 1, before.stdout[-2000:] + before.stderr[-2000:]
    # one decision: the terminal, report.md and the JUnit say what the exit code says
    assert "qualification failed against" in before.stderr and "not ready" in before.stderr
    assert "NOT QUALIFIED" in (tmp_path / "q1" / "report.md").read_text()
    junit = ET.fromstring((tmp_path / "q1" / "report.junit.xml").read_text())
    assert junit.get("failures") == "1" and junit.find(".//failure").get("type") == "readiness"
    record = json.loads((tmp_path / "q1" / "qualify.json").read_text())
    assert record["qualified"] is False and record["accepted"] == []
    # a known issue whose checks no longer fail is reported
    assert record["closable_known_issues"] == ["command.steady"]
    assert "known issue command.steady can close" in before.stderr
    assert record["readiness"]["gating"] == ["command.wobbly host@cpu"]
    md = (tmp_path / "q1" / "readiness.md").read_text()
    assert next(x for x in md.splitlines() if "| command.wobbly" in x).startswith(
        "| extreme regression |"
    )
    assert accept(db, *GOOD, "--until", "2099-01-01").returncode == 0
    after = run_cli(*args, "--out-dir", str(tmp_path / "q2"), db=db)
    assert after.returncode == 0, after.stdout[-2000:] + after.stderr[-2000:]
    assert "accepted by alice" in (tmp_path / "q2" / "readiness.md").read_text()
    record = json.loads((tmp_path / "q2" / "qualify.json").read_text())
    assert record["qualified"] is True and record["readiness"]["gating"] == []
    (acc,) = record["accepted"]  # what attest --qualify names in the VSA
    assert acc["check"] == "command.wobbly" and acc["by"] == "alice"


def test_qualify_says_when_a_known_issue_can_close_by_its_window(db, store, tmp_path):
    """qualify takes the waivers' close window like `known-issues status` and `site build`:
    the same passing runs make an entry closable at the default (3 runs in 14 days) and not
    at --close-runs 500; --close-runs without --known-issues would do nothing: exit 2."""
    _db, job, older = store
    issues = tmp_path / "known-issues.yaml"
    issues.write_text(
        "issues:\n  - check: command.steady\n    backend: cpu\n    reason: was slow once\n"
    )
    args = ("qualify", "--job", str(job), "--baseline", older[0], "--executor", "host")
    records = {}
    for name, window in (
        ("default", ()),
        ("strict", ("--close-runs", "500", "--close-days", "30")),
    ):
        out = tmp_path / name
        proc = run_cli(*args, "--known-issues", str(issues), *window, "--out-dir", str(out), db=db)
        assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
        records[name] = json.loads((out / "qualify.json").read_text())["closable_known_issues"]
    assert records == {"default": ["command.steady"], "strict": []}
    alone = run_cli(*args, "--close-runs", "2", "--out-dir", str(tmp_path / "x"), db=db)
    assert (
        alone.returncode == 2
        and "--close-runs" in alone.stderr
        and "--known-issues" in alone.stderr
    )
