"""The run report shows, per tier with a budget, the time used against it (terminal and
--json), and `valorch qualify` warns before running, as `valorch run` does, when a suite's
stored duration is over its budget."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from acceptance.gate_support import publish_baseline, qualify

JOB = """\
name: tiered
images: [host]
suites:
  - name: command
    tier: smoke
    budget: 1s
    commands:
      - id: slow
        argv: [python3, -c, "import time; time.sleep(1.5)"]
  - name: selftest
    tier: nightly
    checks: [selftest.pass]
"""


def job(tmp_path) -> Path:
    path = tmp_path / "tiered.yaml"
    path.write_text(JOB)
    return path


def test_the_run_report_shows_budget_used_per_tier(cli, tmp_path):
    proc = cli("run", "--job", str(job(tmp_path)), "--no-matrix", "--json")
    assert proc.returncode == 0, proc.stderr[-2000:]
    (run,) = json.loads(proc.stdout)
    smoke, nightly = run["budgets"]
    assert smoke["tier"] == "smoke" and smoke["budget_s"] == 1.0 and smoke["suites"] == ["command"]
    assert smoke["used_s"] >= 1.5 and smoke["over"] is True
    assert nightly["tier"] == "nightly" and nightly["budget_s"] == 1800.0
    assert nightly["suites"] == ["selftest"]
    assert nightly["used_s"] < 1800 and nightly["over"] is False
    text = cli("run", "--job", str(job(tmp_path)), "--no-matrix")
    line = next(x for x in text.stderr.splitlines() if x.startswith("budget run "))
    assert re.search(r"\(host\): smoke [\d.]+s of 1s \(\d+%, over by [\d.]+s\); nightly ", line), (
        line
    )
    assert "of 30.0m (0%)" in line


def test_a_run_with_no_budget_has_no_budget_line(cli, tmp_path):
    path = tmp_path / "plain.yaml"
    path.write_text(
        "name: plain\nimages: [host]\nsuites:\n  - name: selftest\n    checks: [selftest.pass]\n"
    )
    proc = cli("run", "--job", str(path), "--no-matrix", "--json")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert json.loads(proc.stdout)[0]["budgets"] == []
    assert "budget" not in cli("run", "--job", str(path), "--no-matrix").stderr


def test_qualify_warns_before_running_a_suite_over_its_budget(cli, tmp_path):
    path = job(tmp_path)
    publish_baseline(cli, path, "v0.1", "base")  # stores the suite's 1.5 s
    proc = qualify(cli, path, "base", tmp_path / "q")
    assert proc.returncode in (0, 1), proc.stderr[-2000:]
    warning = next(x for x in proc.stderr.splitlines() if "budget" in x)
    assert warning.startswith("warning: suite command on host is estimated at")
    assert "over its smoke budget of 1s" in warning
