"""A store of real runs for the readiness tests (each run takes over 2 s, so a run moved back
with SQLite's whole-second datetime() still lasts longer than the 1 s window refused as
shorter than one run): a job whose command check ``wobbly`` fails
on a seeded fraction of runs (`valorch run --image host`); the first RUNS runs always pass and
are moved 8 days into the past (the older release's window), the next RUNS fail FAILS times."""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from conftest import run_cli

SEED, FIRST, RUNS, FAILS = 7, 8, 8, 6  # runs FIRST.. FIRST+RUNS-1: FAILS of them fail

JOB = """\
name: readiness-flaky
images: [host]
suites:
  - name: command
    commands:
      - id: steady
        argv: [python3, -c, "import time; time.sleep(2.2)"]
      - id: wobbly
        argv: [python3, -c, "{code}"]
"""
CODE = (
    "import pathlib, random, sys; p = pathlib.Path({counter!r}); "
    "n = int(p.read_text()) if p.exists() else 0; p.write_text(str(n + 1)); "
    "sys.exit(1 if n in random.Random({seed}).sample(range({first}, {last}), {fails}) else 0)"
)


def shift_back(db: Path, days: int) -> list[str]:
    """The store's runs so far, moved ``days`` into the past (the older release's window)."""
    con = sqlite3.connect(db)
    ids = [r[0] for r in con.execute("select id from run")]
    con.execute(
        f"update run set started = datetime(started, '-{days} days'), "
        f"ended = datetime(ended, '-{days} days')"
    )
    con.commit()
    con.close()
    return ids


@pytest.fixture(scope="session", name="store")
def store_fixture(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("readiness")
    db = tmp / "valorch.sqlite"
    code = CODE.format(
        counter=str(tmp / "counter"), seed=SEED, first=FIRST, last=FIRST + RUNS, fails=FAILS
    )
    job = tmp / "job.yaml"
    job.write_text(JOB.format(code=code))
    args = ("run", "--job", str(job), "--no-gate", "--no-matrix", "--repeat", str(RUNS))
    first = run_cli(*args, db=db)
    assert first.returncode == 0, first.stderr[-2000:]
    older = shift_back(db, 8)
    second = run_cli(*args, db=db)
    assert second.returncode == 0, second.stderr[-2000:]
    return db, job, older
