"""A regressed readiness cell's triage line is the newest failing run's, whose counts are the
whole streak: a command check that passed in 3 runs and then failed in 3 (a flag file
removed) says "failed in all 3 runs since", not an older failing run's shorter count. Run ids
are random, so the newest failing run is renamed to sort first: an order by id would show
another run's triage."""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from conftest import run_cli

JOB = """\
name: streak
images: [host]
suites:
  - name: command
    commands:
      - id: steady
        argv: [python3, -c, "import time; time.sleep(2.2)"]
      - id: flag
        argv: [test, -e, {flag}]
"""


def rename_run(db: Path, old: str, new: str) -> None:
    """Give run ``old`` the id ``new`` in every table that names it (the change log, which
    notes what changed rather than naming a run's data, notes the renaming itself)."""
    con = sqlite3.connect(db)
    tables = [
        r[0]
        for r in con.execute("select name from sqlite_master where type = 'table'")
        if r[0] != "store_change"
    ]
    for table in tables:
        columns = [c[1] for c in con.execute(f'pragma table_info("{table}")')]
        if "run_id" in columns:
            con.execute(f'update "{table}" set run_id = ? where run_id = ?', (new, old))
    con.execute("update run set id = ? where id = ?", (new, old))
    con.commit()
    con.close()


def test_the_triage_line_counts_the_whole_failing_streak(tmp_path):
    db, flag, job = tmp_path / "valorch.sqlite", tmp_path / "flag", tmp_path / "streak.yaml"
    job.write_text(JOB.format(flag=flag))
    args = ("run", "--job", str(job), "--no-gate", "--no-matrix", "--repeat", "3")
    flag.touch()
    assert run_cli(*args, db=db).returncode == 0
    con = sqlite3.connect(db)
    con.execute("update run set started = datetime(started, '-1 days')")
    con.execute("update run set ended = datetime(ended, '-1 days')")
    con.commit()
    flag.unlink()
    assert run_cli(*args, db=db).returncode == 0
    newest = con.execute("select id from run order by started desc limit 1").fetchone()[0]
    con.close()
    rename_run(db, newest, "00000000-0000-4000-8000-000000000000")

    proc = run_cli(
        "readiness", "--job", "streak", "--basis", "window:2d", "--window", "12h", "--json", db=db
    )
    assert proc.returncode == 1, proc.stderr[-2000:]
    cell = next(c for c in json.loads(proc.stdout)["cells"] if c["check"] == "command.flag")
    assert cell["candidate"]["passed"] == 0 and cell["candidate"]["runs"] == 3, cell
    assert "failed in all 3 runs since" in cell["triage"]["reason"], cell["triage"]
