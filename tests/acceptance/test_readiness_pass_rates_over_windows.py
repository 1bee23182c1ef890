"""Release readiness over many real runs: a command check that fails on a seeded fraction of
runs (`valorch run --image host`, one store) is an extreme regression against an older window
of the same job in which it always passed; an always-passing check is not significant; an
empty basis window is not ready; bad windows and alphas exit 2 naming the flag."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from scipy.stats import fisher_exact

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from conftest import run_cli
from readiness_support import FAILS, RUNS, store_fixture  # noqa: F401  # the store fixture


def readiness(db, *args):
    return run_cli("readiness", "--job", "readiness-flaky", *args, db=db)


def cells(proc) -> dict[str, dict]:
    return {c["check"]: c for c in json.loads(proc.stdout)["cells"]}


def test_flaky_check_is_red_against_the_older_window_with_scipys_p(store):
    db, _job, _older = store
    proc = readiness(db, "--basis", "window:7d", "--json")
    assert proc.returncode == 1, proc.stderr
    got = cells(proc)
    wobbly, steady = got["command.wobbly"], got["command.steady"]
    assert wobbly["status"] == "extreme regression"
    assert wobbly["candidate"] == {"passed": RUNS - FAILS, "runs": RUNS}
    assert wobbly["basis"] == {"passed": RUNS, "runs": RUNS}
    want = fisher_exact([[RUNS - FAILS, FAILS], [RUNS, 0]], alternative="less")[1]
    assert wobbly["p"] == pytest.approx(want, rel=1e-9)
    assert wobbly["q"] is None  # no multiple-testing correction (Sippy's)
    assert wobbly["env"]["alias"] == "host" and wobbly["env"]["arch"] == "cpu"
    assert wobbly["triage"]["class"] and wobbly["triage"]["reason"]
    assert steady["status"] == "not significant" and steady["candidate"]["passed"] == RUNS
    assert "not ready: job readiness-flaky: extreme regression: command.wobbly" in proc.stderr


def test_the_terminal_and_markdown_reports_show_the_red_cell(store):
    db, _job, _older = store
    text = readiness(db, "--basis", "window:14d")
    assert text.returncode == 1
    line = next(x for x in text.stdout.splitlines() if "command.wobbly" in x)
    assert (
        "EXTREME REGRESSION" in line
        and f"candidate {RUNS - FAILS}/{RUNS}" in line
        and f"basis {RUNS}/{RUNS}" in line
    )
    assert "triage:" in text.stdout
    md = readiness(db, "--basis", "window:14d", "--format", "md")
    row = next(x for x in md.stdout.splitlines() if x.startswith("|") and "command.wobbly" in x)
    assert row.startswith("| extreme regression |") and f"{RUNS - FAILS}/{RUNS}" in row
    assert "**NOT READY (exit 1)**" in md.stdout


def test_windows_choose_the_runs_on_each_side(store):
    """A short candidate window against a long older one is red; a candidate window that
    holds both halves has nothing older to compare with: an empty basis, not ready."""
    db, job, _older = store
    proc = readiness(db, "--window", "2d", "--basis", "window:10d", "--json")
    assert proc.returncode == 1, proc.stderr
    assert cells(proc)["command.wobbly"]["basis"]["runs"] == RUNS
    proc = run_cli(
        "readiness", "--job", str(job), "--window", "9d", "--basis", "window:7d", "--json", db=db
    )
    assert proc.returncode == 1 and "an empty basis" in proc.stderr
    assert "--allow-empty" in proc.stderr


def test_a_single_run_basis_is_compared_as_it_is(store):
    """1/1 against 2/8: unequal sides compared as they are; Fisher finds nothing."""
    db, _job, older = store
    proc = readiness(db, "--basis", older[0], "--json")
    assert proc.returncode == 0, proc.stderr
    got = cells(proc)["command.wobbly"]
    assert got["basis"] == {"passed": 1, "runs": 1} and got["status"] == "not significant"


@pytest.mark.parametrize(
    ("args", "flag"),
    [
        (("--window", "1s"), "--window"),
        (("--window", "0d"), "--window"),
        (("--window", "soon"), "--window"),
        (("--alpha", "0"), "--alpha"),
        (("--alpha", "1.5"), "--alpha"),
        (("--alpha", "1"), "--alpha"),
        (("--basis", "window:-3d"), "--basis"),
        (("--basis", "nothing-like-this"), "nothing-like-this"),
    ],
)
def test_bad_input_exits_2_naming_the_flag(store, args, flag):
    db, _job, _older = store
    full = ("--basis", "window:7d", *args) if args[0] != "--basis" else args
    proc = readiness(db, *full)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert flag in proc.stderr and "Traceback" not in proc.stderr


def test_an_unknown_job_exits_2_listing_the_jobs_with_runs(store):
    db, _job, _older = store
    proc = run_cli("readiness", "--job", "nope", "--basis", "window:7d", db=db)
    assert proc.returncode == 2 and "readiness-flaky" in proc.stderr
