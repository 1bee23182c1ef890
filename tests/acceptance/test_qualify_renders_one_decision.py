"""qualify decides once, and every sink says that decision: the exit code, the terminal,
report.md, report.html, report.junit.xml (its failures), qualify.json (what `attest
--qualify` reads). A check the baseline did not have that fails is a new failure (❌,
counted failing), never coverage gained; one whose definition changed is failing and not
comparable, never "regressed". A failure a known issue excuses is said in the headline
("1 failing, excused by waivers"), never "nothing failing". Passes, then a streak of
failures on the same digest, is a regression, never "flaky". A cut detail ends with "…",
and the terminal keeps the "—" before "why:". A candidate that proved nothing (every check
unsupported) is not qualified unless --allow-empty. Real runs on the host executor:
command checks of a job YAML (gate_support.py)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest
import yaml
from gate_support import junit_cases
from root_helpers import run_cli

pytestmark = pytest.mark.cli

LONG = "import sys; sys.exit(1)  # " + "St8optionalIN3c1012MemoryFormatEE" * 8
WIDE = {"COLUMNS": "250"}


def _job(path: Path, name: str, commands: dict[str, list[str]]) -> Path:
    suite = {"name": "command", "commands": [{"id": k, "argv": v} for k, v in commands.items()]}
    path.write_text(yaml.safe_dump({"name": name, "images": ["host"], "suites": [suite]}))
    return path


def _run(db: Path, job: Path, repeat: int = 1, *extra: str) -> list[str]:
    argv = ["run", "--job", str(job), "--executor", "host", "--no-gate", "--no-matrix", "--json"]
    done = run_cli(*argv, "--repeat", str(repeat), *extra, db=db)
    assert done.returncode == 0, done.stderr[-2000:]
    return [r["run"] for r in json.loads(done.stdout)]


def _qualify(db: Path, job: Path, baseline: str, out: Path, *extra: str):
    return run_cli(
        "qualify",
        "--job",
        str(job),
        "--baseline",
        baseline,
        "--executor",
        "host",
        "--out-dir",
        str(out),
        *extra,
        db=db,
        env=WIDE,
    )


def _flat(text: str) -> str:
    """Terminal text without table borders, every run of blanks one space."""
    return " ".join(re.sub("[│┃]", " ", text).split())


def _sinks(out: Path) -> tuple[str, str, ET.Element, dict]:
    return (
        (out / "report.md").read_text(),
        (out / "report.html").read_text(),
        ET.fromstring((out / "report.junit.xml").read_text()),
        json.loads((out / "qualify.json").read_text()),
    )


@pytest.fixture(scope="module")
def new_failure(tmp_path_factory):
    """Baseline: a run of two passing checks. Candidate: ``longmsg`` redefined to fail with a
    long message, and a new check ``must-fail``."""
    tmp = tmp_path_factory.mktemp("newfail")
    db = tmp / "v.sqlite"
    ok = ["python3", "-c", "pass"]
    (base,) = _run(db, _job(tmp / "base.yaml", "newq", {"longmsg": ok, "steady": ok}))
    head = _job(
        tmp / "head.yaml",
        "newq",
        {"longmsg": ["python3", "-c", LONG], "steady": ok, "must-fail": ["false"]},
    )
    return _qualify(db, head, base, tmp / "q"), tmp / "q"


def test_a_new_failing_check_is_a_new_failure_in_every_sink(new_failure):
    proc, out = new_failure
    assert proc.returncode == 1, proc.stderr[-2000:]
    headline = "2 failing (0 regressed, 1 new failure)"
    assert f"NOT QUALIFIED: {headline} (exit 1)" in proc.stdout
    md, html, junit, record = _sinks(out)
    assert f"**{headline}** (exit 1)" in md
    row = next(x for x in md.splitlines() if "`command.must-fail`" in x)
    assert row.startswith("| ❌ | host |") and "| new failure |" in row
    assert "Counts: failing 2, new failure 1, not comparable 1, unchanged 1" in md
    assert "coverage_gained" not in md + proc.stdout and "coverage gained 1" not in md
    assert "counts: failing 2, new failure 1, not comparable 1, unchanged 1" in proc.stdout
    verdict = html.split('<p id="verdict"', 1)[1].split("</p>", 1)[0]
    assert "NOT QUALIFIED" in verdict and f"{headline} (exit 1)" in verdict
    assert junit.get("failures") == "2"
    cases = junit_cases(out / "report.junit.xml")
    assert cases["command.must-fail"][0] == cases["command.longmsg"][0] == "failure"
    assert record["qualified"] is False and record["exit_code"] == 1
    assert record["counts"]["failing"] == 2 and record["counts"]["new_failures"] == 1
    assert record["headline"] == f"not qualified: {headline}"


def test_a_redefined_check_that_fails_is_failing_not_comparable_never_regressed(new_failure):
    _proc, out = new_failure
    md = (out / "report.md").read_text()
    assert md.startswith("# Qualification: ")  # a gate's report, titled as one
    assert "<h1>Qualification: " in (out / "report.html").read_text()
    row = next(x for x in md.splitlines() if "`command.longmsg`" in x)
    assert row.startswith("| ❌ |") and "failing, not comparable (definition changed)" in row
    assert "| regressed |" not in row
    assert json.loads((out / "qualify.json").read_text())["counts"]["regressed"] == 0


def test_a_cut_detail_ends_with_an_ellipsis_and_why_keeps_its_dash(new_failure):
    proc, out = new_failure
    md = (out / "report.md").read_text()
    row = next(x for x in md.splitlines() if "`command.longmsg`" in x)
    assert "MemoryFormatEE" * 8 not in row and re.search(r"Memory\w*… — why: ", row), row
    assert "… — why: " in _flat(proc.stdout), proc.stdout
    assert "— why: new check:" in _flat(proc.stdout)  # the uncut detail keeps it too


@pytest.fixture(scope="module")
def streak(tmp_path_factory):
    """``flag-present`` passes in 4 runs (the baseline is the last), then fails in 5 runs and
    in the qualification's own: the same digest on the same host throughout."""
    tmp = tmp_path_factory.mktemp("streak")
    db, flag = tmp / "v.sqlite", tmp / "flag"
    job = _job(tmp / "streak.yaml", "streakq", {"flag-present": ["test", "-e", str(flag)]})
    flag.touch()
    passes = _run(db, job, 4)
    flag.unlink()
    fails = _run(db, job, 5)
    issues = tmp / "known-issues.yaml"
    issues.write_text(
        "issues:\n  - check: command.flag-present\n    status: fail\n"
        "    reason: the flag file is gone, by design\n    expires: 2999-01-01\n"
    )
    proc = _qualify(db, job, passes[-1], tmp / "q", "--known-issues", str(issues))
    return db, passes, fails, proc, tmp / "q"


def test_an_excused_failure_is_said_in_every_headline_never_nothing_failing(streak):
    _db, _passes, _fails, proc, out = streak
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    said = "1 failing, excused by waivers"
    assert f"qualified: {said} (exit 0)" in proc.stdout
    md, html, junit, record = _sinks(out)
    assert "nothing failing" not in md + html + proc.stdout
    assert f"**{said}** (exit 0)" in md and f"{said} (exit 0)" in html
    assert record["headline"] == f"qualified: {said}" and record["qualified"] is True
    assert record["counts"]["excused"] == 1 and junit.get("failures") == "0"
    assert junit_cases(out / "report.junit.xml")["command.flag-present"][0] == "skipped"


def test_a_streak_of_failures_after_passes_is_a_regression_never_flaky(streak):
    db, passes, fails, _proc, out = streak
    first = json.loads(run_cli("results", "show", fails[0], "--json", db=db).stdout)
    t = first["triage"]["command.flag-present"]
    assert t["class"] == "regression" and "in 4 runs" in t["reason"], t
    (why,) = json.loads((out / "qualify.json").read_text())["triage"].values()
    assert why["class"] == "regression" and "all 6 runs since" in why["reason"], why
    diff = json.loads(run_cli("diff", passes[-1], fails[-1], "--json", db=db).stdout)
    (change,) = [c for c in diff["changes"] if c["check"] == "command.flag-present"]
    assert change["triage"]["class"] == "regression"
    assert "flaky" not in json.dumps(diff["changes"])


def test_a_candidate_that_proved_nothing_is_not_qualified_unless_allowed(tmp_path):
    db = tmp_path / "v.sqlite"
    job = _job(tmp_path / "empty.yaml", "emptyq", {"absent": ["no-such-tool-valorch-x"]})
    (base,) = _run(db, job, 1, "--allow-empty")  # a baseline that tests nothing, knowingly
    proc = _qualify(db, job, base, tmp_path / "q")
    assert proc.returncode == 1, proc.stdout[-2000:] + proc.stderr[-2000:]
    text = proc.stdout + proc.stderr
    assert "NOT QUALIFIED: nothing to judge: none of the candidate's 1 check ran" in proc.stdout
    assert "--allow-empty accepts it knowingly" in text
    md, html, junit, record = _sinks(tmp_path / "q")
    assert "## Verdict: ❌ NOT QUALIFIED" in md and "nothing to judge" in html
    assert junit.get("failures") == "1" and record["qualified"] is False
    allowed = _qualify(db, job, base, tmp_path / "q2", "--allow-empty")
    assert allowed.returncode == 0, allowed.stdout[-2000:] + allowed.stderr[-2000:]
    assert "(not gated: --allow-empty)" in allowed.stdout
    assert json.loads((tmp_path / "q2" / "qualify.json").read_text())["qualified"] is True
    # a selection that matches nothing: refused as a spec error (exit 2), or nothing to judge
    spec = {"name": "emptyq", "images": ["host"]}
    spec["suites"] = [{"name": "selftest", "checks": ["selftest.no-such-*"]}]
    (tmp_path / "glob.yaml").write_text(yaml.safe_dump(spec))
    none = _qualify(db, tmp_path / "glob.yaml", base, tmp_path / "q3")
    assert none.returncode in (1, 2), none.stdout[-2000:] + none.stderr[-2000:]
    if none.returncode == 1:
        assert "nothing to judge: the candidate has no results" in none.stdout
        assert json.loads((tmp_path / "q3" / "qualify.json").read_text())["qualified"] is False
