"""Suite tiers with time budgets: a suite declares `tier:` and `budget:`; the planner estimates
it from the durations stored by earlier runs and warns before running when the budget would
be exceeded. A first run (no stored duration) and a suite within budget say nothing; a bad
budget or tier exits 2 naming the file and line."""

from __future__ import annotations

from pathlib import Path

import pytest

JOB = """\
name: tiered
images: [host]
suites:
  - name: command
    tier: {tier}
{budget}    commands:
      - id: slow
        argv: [python3, -c, "import time; time.sleep(1.5)"]
"""


def job(tmp_path, tier="smoke", budget="    budget: 1s\n") -> Path:
    path = tmp_path / "job.yaml"
    path.write_text(JOB.format(tier=tier, budget=budget))
    return path


def warned(stderr: str) -> list[str]:
    """The budget warnings (the report's own "budget run ..." line is not one)."""
    return [x for x in stderr.splitlines() if x.startswith("warning:") and "budget" in x]


def run(cli, path):
    proc = cli("run", "--job", str(path), "--no-matrix")
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc


def test_a_suite_over_its_budget_is_warned_about_before_it_runs(cli, tmp_path):
    path = job(tmp_path)
    first = run(cli, path)
    assert not warned(first.stderr)  # nothing stored to estimate from
    second = run(cli, path)
    (warning,) = warned(second.stderr)
    assert warning.startswith("warning: suite command on host is estimated at")
    assert "over its smoke budget of 1s" in warning
    # before it runs: the warning comes before the run's own lines
    assert second.stderr.index("budget") < second.stderr.index("run ")


def test_a_tier_default_budget_holds_a_short_suite(cli, tmp_path):
    path = job(tmp_path, budget="")  # smoke: 5 minutes
    run(cli, path)
    assert not warned(run(cli, path).stderr)


@pytest.mark.parametrize(
    ("tier", "budget", "key"),
    [
        ("smoke", "    budget: soon\n", "budget"),
        ("weekly", "", "tier"),
        ("smoke", "    budget: -5\n", "budget"),
    ],
)
def test_a_bad_tier_or_budget_exits_2_naming_file_and_line(cli, tmp_path, tier, budget, key):
    path = job(tmp_path, tier, budget)
    proc = cli("run", "--job", str(path), "--no-matrix")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "job.yaml:" in proc.stderr and key in proc.stderr and "Traceback" not in proc.stderr
