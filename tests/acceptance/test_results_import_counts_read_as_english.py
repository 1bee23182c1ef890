"""`valorch results import` (and its --dry-run) counts what it brought as English does: an
export of one run of one check is "1 new of 1 run, 1 new result, 0 new inventory rows"."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from conftest import run_cli

JOB = """\
name: one
images: [host]
suites:
  - name: command
    commands:
      - {id: py, argv: [python3, --version]}
"""


def test_one_run_of_one_check_is_said_in_the_singular(tmp_path):
    db, job, export = tmp_path / "a.sqlite", tmp_path / "one.yaml", tmp_path / "one.json"
    job.write_text(JOB)
    proc = run_cli("run", "--job", str(job), "--no-matrix", "--json", db=db)
    assert proc.returncode == 0, proc.stderr
    run = json.loads(proc.stdout)[0]["run"]
    assert run_cli("results", "export", run, "--out", str(export), db=db).returncode == 0

    other = tmp_path / "b.sqlite"
    said = "1 new of 1 run, 1 new result, 0 new inventory rows"
    proc = run_cli("results", "import", str(export), "--dry-run", db=other)
    assert proc.returncode == 0 and f"would import {export}: {said}" in proc.stderr, proc.stderr
    proc = run_cli("results", "import", str(export), db=other)
    assert proc.returncode == 0 and f"imported {export}: {said}" in proc.stderr, proc.stderr
