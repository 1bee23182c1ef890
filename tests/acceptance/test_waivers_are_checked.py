"""Waivers that are checked: `valorch accept add` refuses a check, a glob or an --env that
names nothing valorch knows (exit 2, with the nearest names), takes --until as a whole UTC day
and nothing else; `accept revoke` withdraws one, kept in the history; `known-issues status`
keeps an issue open while an environment where it failed has not passed again
(docs/readiness.md). The store is written directly (tests/store_helpers.py): the runs
themselves are not the point."""

from __future__ import annotations

import json
import sqlite3
from datetime import timedelta

import pytest
from conftest import run_cli

from orchestrator.spec import GPU, CheckResult, HostSpec, ImageSpec
from orchestrator.store import queries
from orchestrator.store.db import open_engine, session_factory
from tests.store_helpers import stored_run

ROCM = ImageSpec(alias="rocm6.3_py3.12_pytorch_2.4", reference="r:1", backend="rocm", family="rocm")
HOST = ImageSpec(alias="host", reference="host", backend="cpu")
MI210 = HostSpec(name="mi210", gpus=(GPU(vendor="amd", arch="gfx90a", index=0),))
MI300 = HostSpec(name="mi300", gpus=(GPU(vendor="amd", arch="gfx942", index=0),))
CPU = HostSpec(name="cpu1")
CHECK = "command.flag-present"
GOOD = ("--reason", "tracked upstream", "--by", "alice", "--until", "2099-01-01")


def _store(path, runs) -> None:
    """``runs``: (image, host, status of CHECK, days ago), each a finished run."""
    engine = open_engine(str(path))
    with session_factory(engine)() as s:
        for image, host, status, ago in runs:
            run = stored_run(
                s,
                image,
                [
                    CheckResult(check=CHECK, status=status),
                    CheckResult(check="env.version.python", status="pass"),
                ],
                host=host,
            )
            run.started = queries.now() - timedelta(days=ago)
            run.ended, run.state = run.started + timedelta(minutes=1), "done"
        s.commit()
    engine.dispose()


def _copy(store, tmp_path):
    """A private copy of the module's store (SQLite's backup: the WAL's pages too)."""
    db = tmp_path / "v.sqlite"
    with sqlite3.connect(store) as src, sqlite3.connect(db) as dst:
        src.backup(dst)
    return db


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """gfx90a failed 20 days ago and has not run since; gfx942 passed three times this week."""
    path = tmp_path_factory.mktemp("waivers") / "valorch.sqlite"
    _store(
        path,
        [
            (ROCM, MI210, "fail", 20),
            *((ROCM, MI300, "pass", d) for d in (1, 2, 3)),
            (HOST, CPU, "pass", 1),
        ],
    )
    return path


def accept(db, check, env, *args):
    return run_cli("accept", "add", check, "--env", env, *args, db=db)


@pytest.mark.parametrize(
    ("check", "env", "says"),
    [
        ("command.flag-presnt", "host@cpu", ["CHECK 'command.flag-presnt' is no check", CHECK]),
        ("kernels.gem", "host", ["is no check", "did you mean"]),
        ("command.[flag", "host", ["never closed"]),
        ("nosuch.*", "host", ["matches no check"]),
        (CHECK, "hots@cpu", ["--env 'hots@cpu' matches no environment", "host@cpu"]),
        (CHECK, "rocm_*@amd:gfx942", ["matches no environment", "rocm6.3_py3.12_pytorch_2.4@"]),
        (CHECK, "host@cpu@x", ["is not an image alias or ALIAS@ARCH"]),
        (CHECK, "host@[cpu", ["never closed"]),
    ],
)
def test_a_waiver_naming_nothing_known_is_exit_2_with_the_nearest(store, check, env, says):
    proc = accept(store, check, env, *GOOD)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    for text in says:
        assert text in proc.stderr, proc.stderr


@pytest.mark.parametrize(
    "until", ["2027-01-01T00:00+14:00", "2027-01-31T23:59", "2027-02-30", "99999-01-01", "soon"]
)
def test_until_takes_a_whole_day_and_nothing_else(store, until):
    proc = accept(store, CHECK, "host", *GOOD[:4], "--until", until)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "--until" in proc.stderr and "YYYY-MM-DD" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_accept_a_known_env_revoke_it_and_keep_it_in_history(store, tmp_path):
    db = _copy(store, tmp_path)
    # the documented env form, a stored glob match; a manifest check on a glob
    ok = accept(db, CHECK, "rocm*@amd:gfx9*", *GOOD, "--json")
    assert ok.returncode == 0, ok.stderr
    assert json.loads(ok.stdout)["until"] == "2099-01-01"
    ahead = accept(db, "env.version.*", "rocm_*@amd:gfx942", *GOOD, "--allow-unseen")
    assert ahead.returncode == 0, ahead.stderr
    assert "through 2099-01-01 (UTC, inclusive)" in ahead.stderr
    gone = run_cli("accept", "revoke", "1", "--by", "bob", "--reason", "fixed in 6.4", db=db)
    assert gone.returncode == 0, gone.stderr
    assert "revoked #1" in gone.stderr and "by bob" in gone.stderr
    again = run_cli("accept", "revoke", "1", "--by", "bob", "--reason", "twice", db=db)
    assert again.returncode == 2 and "already revoked by bob" in again.stderr
    none = run_cli("accept", "revoke", "99", "--by", "bob", "--reason", "x", db=db)
    assert none.returncode == 2 and "no acceptance #99" in none.stderr
    huge = run_cli("accept", "revoke", "9" * 20, "--by", "bob", "--reason", "x", db=db)
    assert huge.returncode == 2 and "Traceback" not in huge.stderr, huge.stderr
    listed = json.loads(run_cli("accept", "list", "--json", db=db).stdout)
    states = {r["id"]: r for r in listed}
    assert states[1]["state"] == "revoked" and states[1]["live"] is False
    assert states[1]["revoked"]["by"] == "bob" and states[1]["revoked"]["reason"] == "fixed in 6.4"
    assert states[2]["state"] == "live" and states[2]["revoked"] is None
    text = run_cli("accept", "list", db=db).stdout
    assert "(revoked)" in text and "revoked by bob on" in text and ": fixed in 6.4" in text


ISSUE = f"""\
issues:
  - check: {CHECK}
    images: "rocm*"
    arch: gfx9x
    reason: flag missing on MI GPUs
"""


def test_an_issue_stays_open_until_the_arch_that_failed_passes_again(store, tmp_path):
    db = _copy(store, tmp_path)
    issues = tmp_path / "known-issues.yaml"
    issues.write_text(ISSUE)
    args = ("known-issues", "status", "--known-issues", str(issues))
    (before,) = json.loads(run_cli(*args, "--json", db=db).stdout)
    gfx90a = f"{ROCM.alias}@amd:gfx90a"
    assert before["can_close"] is False, before
    assert before["failed_in"] == [gfx90a] and before["keeps_open"] == [gfx90a]
    assert f"{gfx90a}: failed and has not run in the last 14 days (needs 3" in before["why"]
    assert before["recent"] == {f"{ROCM.alias}@amd:gfx942": {"passed": 3, "runs": 3}}
    text = run_cli(*args, db=db)
    assert text.returncode == 0 and f"{CHECK} [images rocm*, arch gfx9x]: open" in text.stdout
    _store(db, [(ROCM, MI210, "pass", d) for d in (0.5, 1.5, 2.5)])
    (after,) = json.loads(run_cli(*args, "--json", db=db).stdout)
    assert after["can_close"] is True and after["keeps_open"] == [], after
    assert "CAN CLOSE" in run_cli(*args, db=db).stdout
