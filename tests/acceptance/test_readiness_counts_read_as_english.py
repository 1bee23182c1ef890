"""`valorch readiness` says its tallies as English does: "2 missing samples", "2 cells
tested", never "2 missing sample" or "cell(s)" (a run of three command checks as the basis;
then a run of the job with one of them, and a run of all three, as the candidates)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from conftest import run_cli

JOB = """\
name: tally
images: [host]
suites:
  - name: command
    commands:
      - {id: a, argv: [python3, -c, "import time; time.sleep(1.2)"]}
      - {id: b, argv: [python3, --version]}
      - {id: c, argv: [python3, --version]}
"""


def _run(db: Path, job: Path) -> str:
    proc = run_cli("run", "--job", str(job), "--no-matrix", "--no-gate", "--json", db=db)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout)[0]["run"]


def test_tallies_and_the_ready_line_take_the_plural(tmp_path):
    db, job = tmp_path / "valorch.sqlite", tmp_path / "tally.yaml"
    job.write_text(JOB)
    basis = _run(db, job)
    only_a = tmp_path / "tally-a.yaml"  # the same job, b and c left out: missing samples
    only_a.write_text(JOB.split("      - {id: b")[0])
    _run(db, only_a)

    proc = run_cli("readiness", "--job", "tally", "--basis", basis, "--window", "1h", db=db)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "2 missing samples" in proc.stdout, proc.stdout

    _run(db, job)  # every cell has a candidate run now
    proc = run_cli("readiness", "--job", "tally", "--basis", basis, "--window", "1h", db=db)
    said = proc.stdout + proc.stderr
    assert proc.returncode == 0, said
    assert "in 3 cells tested" in said and "cell(s)" not in said, said
