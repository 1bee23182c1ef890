"""Known issues scoped like the fleet (image glob, backend, GPU arch or family), and noticing
when they can close: `valorch known-issues status` lists the runs each issue excused and says
"can close" when its checks passed in every matching environment for N runs over D days.
Real runs of a flaky command check (tests/acceptance/readiness_support.py)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from conftest import run_cli
from readiness_support import FAILS, RUNS, store_fixture  # noqa: F401  # the store fixture

ISSUES = """\
issues:
  - check: command.wobbly
    images: host
    arch: cpu
    reason: the counter fails some runs
  - check: command.steady
    backend: cpu
    reason: was slow once
  - check: command.steady
    arch: [gfx94x, sm_90]
    reason: only on MI300 and H100 hosts
  - check: "command.*"
    reason: every image, every GPU
"""


def status(store, tmp_path, *args):
    path = tmp_path / "known-issues.yaml"
    path.write_text(ISSUES)
    return run_cli(
        "known-issues", "status", "--known-issues", str(path), "--json", *args, db=store[0]
    )


def test_each_issue_lists_what_it_excused_and_the_green_one_can_close(store, tmp_path):
    proc = status(store, tmp_path)
    assert proc.returncode == 0, proc.stderr
    wobbly, steady, elsewhere, unscoped = json.loads(proc.stdout)
    assert len(wobbly["excused_runs"]) == FAILS and wobbly["can_close"] is False
    assert wobbly["recent"]["host@cpu"] == {"passed": 2 * RUNS - FAILS, "runs": 2 * RUNS}
    assert steady["can_close"] is True and steady["excused_runs"] == []
    assert "passed in every run" in steady["why"] and "host@cpu: 16 runs" in steady["why"]
    assert (
        elsewhere["can_close"] is False and "no run of its checks in its scope" in elsewhere["why"]
    )
    assert unscoped["can_close"] is False and len(unscoped["excused_runs"]) == FAILS
    assert "known-issues.yaml:12" in proc.stderr and "is not scoped" in proc.stderr


def test_more_runs_or_a_shorter_span_than_the_store_holds_keeps_it_open(store, tmp_path):
    proc = status(store, tmp_path, "--runs", "17")
    steady = json.loads(proc.stdout)[1]
    assert steady["can_close"] is False and "16/16 passed (needs 17)" in steady["why"]
    proc = status(store, tmp_path, "--days", "7")  # the older passing runs fall out
    steady = json.loads(proc.stdout)[1]
    assert steady["can_close"] is True and steady["recent"]["host@cpu"]["runs"] == RUNS


def test_the_text_report_says_can_close(store, tmp_path):
    path = tmp_path / "k.yaml"
    path.write_text(ISSUES)
    proc = run_cli("known-issues", "status", "--known-issues", str(path), db=store[0])
    assert proc.returncode == 0
    assert "command.steady [backend cpu]: CAN CLOSE" in proc.stdout
    assert f"command.wobbly [images host, arch cpu]: open; excused {FAILS} runs" in proc.stdout


@pytest.mark.parametrize("arch", ["gfx9999z", "sm90", "h100", "amd"])
def test_an_unknown_arch_exits_2_naming_file_and_line(store, tmp_path, arch):
    path = tmp_path / "bad.yaml"
    path.write_text(f"issues:\n  - check: command.steady\n    reason: x\n    arch: [{arch}]\n")
    proc = run_cli("known-issues", "status", "--known-issues", str(path), db=store[0])
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "bad.yaml:" in proc.stderr and "arch" in proc.stderr and arch in proc.stderr
    assert "Traceback" not in proc.stderr
