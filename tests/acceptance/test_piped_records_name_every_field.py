"""A table piped too narrow for its words becomes one record per block, each line
``header: value``; a column without a header (the ❌ mark of a diff's failures) is its value
alone, never a line that starts with ": " (a diff of a passing run against a failing one)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from conftest import run_cli

JOB = """\
name: marks
images: [host]
suites:
  - name: command
    commands:
      - {{id: flag, argv: [test, -e, {flag}]}}
"""


def test_a_headerless_column_reads_as_its_value(tmp_path):
    db, flag, job = tmp_path / "valorch.sqlite", tmp_path / "flag", tmp_path / "marks.yaml"
    job.write_text(JOB.format(flag=flag))
    runs = []
    for present in (True, False):
        if present:
            flag.touch()
        else:
            flag.unlink()
        proc = run_cli("run", "--job", str(job), "--no-matrix", "--no-gate", "--json", db=db)
        assert proc.returncode == 0, proc.stderr
        runs.append(json.loads(proc.stdout)[0]["run"])

    proc = run_cli("diff", *runs, db=db, env={"COLUMNS": "50"})
    assert proc.returncode == 1, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert "check: command.flag" in lines, proc.stdout  # one record per block
    assert not [line for line in lines if line.startswith(": ")], proc.stdout
    assert "❌" in lines, proc.stdout
