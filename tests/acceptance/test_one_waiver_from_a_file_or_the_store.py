"""One way to excuse a failure: a known-issues file's entry and an ``accept add`` row are two
sources of the same waiver, and each excuses the same failure the same way in run, diff,
qualify and readiness, with the same text (render/waivers.py). An entry scoped to a GPU arch
excuses only that arch (here: nothing on a CPU host). The old spellings of the window options
still work, with a warning naming the new one. Real runs of a command check that passes in
the older runs and fails in the newer ones, through the real CLI."""

from __future__ import annotations

import json
import shutil
import sqlite3
import sys
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from conftest import run_cli
from readiness_support import shift_back

JOB = """\
name: waived
images: [host]
suites:
  - name: command
    commands:
      - id: steady
        argv: [python3, -c, "import time; time.sleep(2.2)"]
      - id: broken
        argv: [python3, -c, "import os, sys; sys.exit(1 if os.path.exists({flag!r}) else 0)"]
"""
REASON = "tracked upstream, fixed in the next image"
RUNS = 4


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """RUNS passing runs moved 8 days back, then RUNS where command.broken fails."""
    tmp = tmp_path_factory.mktemp("waived")
    db, job, flag = tmp / "valorch.sqlite", tmp / "job.yaml", tmp / "broken"
    job.write_text(JOB.format(flag=str(flag)))
    args = ("run", "--job", str(job), "--no-gate", "--no-matrix", "--repeat", str(RUNS))
    assert run_cli(*args, db=db).returncode == 0
    older = shift_back(db, 8)
    flag.write_text("")
    assert run_cli(*args, db=db).returncode == 0
    con = sqlite3.connect(db)
    newer = [r[0] for r in con.execute("select id from run") if r[0] not in older]
    con.close()
    return db, job, older, newer


def waived(source: str, tmp_path: Path, db: Path, entry: str = "images: host") -> tuple[str, ...]:
    """The command-line arguments that bring the waiver: a file, or a row added to ``db``."""
    if source == "file":
        path = tmp_path / "known-issues.yaml"
        path.write_text(f"issues:\n  - check: command.broken\n    {entry}\n    reason: {REASON}\n")
        return ("--known-issues", str(path))
    added = run_cli(
        "accept", "add", "command.broken", "--env", "host", "--reason", REASON, "--by", "alice",
        "--until", "2099-01-01", db=db,
    )  # fmt: skip
    assert added.returncode == 0, added.stderr
    return ()


def said(source: str) -> str:
    """The one line every sink shows beside the excused failure."""
    return f"waived: {REASON}" + (
        " (accepted by alice until 2099-01-01)" if source == "store" else ""
    )


@pytest.fixture
def db(store, tmp_path):
    copy = tmp_path / "valorch.sqlite"
    shutil.copy(store[0], copy)
    return copy


def test_without_a_waiver_every_gate_says_no(store, db, tmp_path):
    _db, job, older, newer = store
    ran = run_cli("run", "--job", str(job), "--no-matrix", db=db)
    assert ran.returncode == 1
    assert run_cli("diff", older[0], newer[0], db=db).returncode == 1
    ready = run_cli("readiness", "--job", "waived", "--basis", "window:7d", db=db)
    assert ready.returncode == 1


@pytest.mark.parametrize("source", ["file", "store"])
def test_a_file_entry_and_an_accepted_row_excuse_alike(store, db, tmp_path, source):
    _db, job, older, newer = store
    extra = waived(source, tmp_path, db)
    # run: exit 0, the failure skipped in the JUnit with the waiver's line
    junit = tmp_path / "run.xml"
    ran = run_cli("run", "--job", str(job), "--no-matrix", "--junit", str(junit), *extra, db=db)
    assert ran.returncode == 0, ran.stdout[-2000:] + ran.stderr[-2000:]
    case = next(c for c in ET.parse(junit).iter("testcase") if c.get("name") == "command.broken")
    assert case.find("skipped").get("message") == said(source)
    # diff: the failure is expected, with the same line in the JSON and the JUnit
    diff = run_cli("diff", older[0], newer[0], "--json", *extra, db=db)
    assert diff.returncode == 0, diff.stdout[-2000:] + diff.stderr[-2000:]
    cell = next(c for c in json.loads(diff.stdout)["changes"] if c["check"] == "command.broken")
    assert cell["kind"] == "expected" and cell["note"] == REASON
    # qualify (with the old spelling of --window): qualified, its JUnit skips the failure
    out = tmp_path / "q"
    qualify = run_cli(
        "qualify", "--job", str(job), "--baseline", older[0], "--executor", "host",
        "--readiness", "window:7d", "--readiness-window", "7d", "--out-dir", str(out),
        *extra, db=db,
    )  # fmt: skip
    assert qualify.returncode == 0, qualify.stdout[-2000:] + qualify.stderr[-2000:]
    assert "--readiness-window is now --window" in qualify.stderr
    skipped = [
        c.find("skipped").get("message")
        for c in ET.parse(out / "report.junit.xml").iter("testcase")
        if c.get("name") == "command.broken" and c.find("skipped") is not None
    ]
    assert skipped == [said(source)]
    # readiness: the regressed cell stays red, excused, with the same line beside it
    ready = run_cli("readiness", "--job", "waived", "--basis", "window:7d", "--json", *extra, db=db)
    assert ready.returncode == 0, ready.stdout[-2000:] + ready.stderr[-2000:]
    cell = next(c for c in json.loads(ready.stdout)["cells"] if c["check"] == "command.broken")
    assert cell["gating"] is False and cell["accepted"]["live"] is True
    text = run_cli("readiness", "--job", "waived", "--basis", "window:7d", *extra, db=db).stdout
    assert said(source) in text
    # the matrix and the site's matrix page: the failure shows as ⚑, the waiver's line beside it
    md = run_cli("matrix", "render", "--job", "waived", *extra, db=db)
    assert md.returncode == 0, md.stderr
    row = next(x for x in md.stdout.splitlines() if "command.broken" in x)
    assert "⚑ xfail" in row and "❌" not in row, row
    built = run_cli("site", "build", "--out", str(tmp_path / "site"), *extra, db=db)
    assert built.returncode == 0, built.stderr
    page = (tmp_path / "site" / "matrix" / "checks.html").read_text()
    row = page[page.index("command.broken") :]
    row = row[: row.index("</tr>")]
    assert 'data-status="xfail">waived</span>' in row and 'data-status="fail"' not in row


def test_an_arch_scoped_entry_excuses_only_its_arch(store, db, tmp_path):
    """arch: gfx942 scopes the entry to hosts with that GPU: a CPU host's failure stays one."""
    _db, job, older, newer = store
    extra = waived("file", tmp_path, db, entry="arch: gfx942")
    assert run_cli("run", "--job", str(job), "--no-matrix", *extra, db=db).returncode == 1
    diff = run_cli("diff", older[0], newer[0], "--json", *extra, db=db)
    assert diff.returncode == 1
    cell = next(c for c in json.loads(diff.stdout)["changes"] if c["check"] == "command.broken")
    assert cell["kind"] == "regressed"
    ready = run_cli("readiness", "--job", "waived", "--basis", "window:7d", *extra, db=db)
    assert ready.returncode == 1


def test_the_old_window_spellings_still_work(store, db, tmp_path):
    extra = waived("file", tmp_path, db)
    old = run_cli("known-issues", "status", *extra, "--runs", "2", "--days", "7", "--json", db=db)
    new = run_cli(
        "known-issues", "status", *extra, "--close-runs", "2", "--close-days", "7", "--json", db=db
    )
    assert old.returncode == new.returncode == 0, old.stderr + new.stderr
    assert json.loads(old.stdout) == json.loads(new.stdout)
    assert "--days is now --close-days" in old.stderr and "--runs is now --close-runs" in old.stderr
    assert "warning" not in new.stderr
    assert "--days" not in run_cli("known-issues", "status", "--help").stdout
    bad = run_cli("known-issues", "status", *extra, "--days", "0", db=db)
    assert bad.returncode == 2 and "--close-days" in bad.stderr
