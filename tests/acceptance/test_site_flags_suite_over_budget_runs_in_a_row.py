"""The site flags a suite that took longer than its time budget in K stored runs in a row
(`valorch site build --budget-runs K`, default 3): on the index, from the durations each run
stored. A run within budget ends the streak."""

from __future__ import annotations

import html
import re
from pathlib import Path

JOB = """\
name: tiered
images: [host]
suites:
  - name: command
    tier: smoke
    budget: {budget}
    commands:
      - id: slow
        argv: [python3, -c, "import time; time.sleep(1.5)"]
  - name: selftest
    tier: nightly
    checks: [selftest.pass]
"""


def job(tmp_path, budget="1s") -> Path:
    path = tmp_path / "tiered.yaml"
    path.write_text(JOB.format(budget=budget))
    return path


def flagged(cli, tmp_path, *args) -> list[str]:
    out = tmp_path / "site"
    proc = cli("site", "build", "--out", str(out), *args)
    assert proc.returncode == 0, proc.stderr[-2000:]
    index = (out / "index.html").read_text()
    if 'id="over-budget"' not in index:
        return []
    block = index.split('id="over-budget">', 1)[1].split("</ul>", 1)[0]
    return [html.unescape(re.sub(r"<[^>]+>", "", li)) for li in block.split("<li>")[1:]]


def test_a_suite_over_budget_three_runs_in_a_row_is_flagged(cli, tmp_path):
    path = job(tmp_path)
    proc = cli("run", "--job", str(path), "--no-matrix", "--repeat", "2")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert flagged(cli, tmp_path) == []  # two runs are not three
    assert cli("run", "--job", str(path), "--no-matrix").returncode == 0
    (line,) = flagged(cli, tmp_path)  # the selftest suite is within its budget
    assert line.startswith("over budget suite command on host (job tiered): over its smoke")
    assert "budget of 1s in its last 3 runs in a row (newest " in line
    assert flagged(cli, tmp_path, "--budget-runs", "4") == []
    assert len(flagged(cli, tmp_path, "--budget-runs", "1")) == 1


def test_a_run_within_budget_ends_the_streak(cli, tmp_path):
    proc = cli("run", "--job", str(job(tmp_path)), "--no-matrix", "--repeat", "3")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert len(flagged(cli, tmp_path)) == 1
    proc = cli("run", "--job", str(job(tmp_path, "10s")), "--no-matrix")  # raised budget
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert flagged(cli, tmp_path) == []


def test_budget_runs_below_one_exits_2(cli, tmp_path):
    assert cli("run", "--job", str(job(tmp_path)), "--no-matrix").returncode == 0
    proc = cli("site", "build", "--out", str(tmp_path / "s"), "--budget-runs", "0")
    assert proc.returncode == 2 and "--budget-runs" in proc.stderr
    assert "Traceback" not in proc.stderr
