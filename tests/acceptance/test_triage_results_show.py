"""`valorch results show` says why each red check is red, against the real engine: an image tag
moved from valorch/test:culprit-good (vfmath 1.0) to valorch/test:culprit-bad (a broken 1.1),
so the job's vfmath check that passed on the previous digest fails now (regression); a check
that fails on its first run is a new check, and on its second run one that never passed."""

import json
import subprocess
import uuid

import pytest
from vfmath_support import BAD, GOOD, job, need_images

from tests.conftest import run_cli

pytestmark = pytest.mark.docker

ALWAYS_FALSE = """      - id: always-false
        argv: [python3, -c, "raise SystemExit(1)"]
"""


def test_results_show_names_regression_new_check_and_never_passed(tmp_path):
    need_images()
    tag = f"valorch/triage-{uuid.uuid4().hex[:8]}:nightly"
    catalog = tmp_path / "images"
    catalog.mkdir()
    (catalog / "t.yaml").write_text(
        f"family: t\nbackend: cpu\nlocal: true\nimages:\n  - alias: tri\n    reference: {tag}\n"
    )
    (tmp_path / "job.yaml").write_text(job("triage", "tri", ALWAYS_FALSE))
    db = tmp_path / "t.sqlite"
    runs = []
    try:
        for src in (GOOD, BAD):
            subprocess.run(["docker", "tag", src, tag], check=True, capture_output=True)
            p = run_cli(
                "run",
                "--job",
                str(tmp_path / "job.yaml"),
                "--catalog",
                str(catalog),
                "--no-gate",
                "--no-matrix",
                db=db,
            )
            assert p.returncode == 0, p.stderr
            listed = json.loads(run_cli("results", "list", "--json", db=db).stdout)
            runs.append(next(r["run"] for r in listed if r["run"] not in runs))
    finally:
        subprocess.run(["docker", "rmi", tag], capture_output=True)
    first = json.loads(
        run_cli("results", "show", runs[0], "--json", "--catalog", str(catalog), db=db).stdout
    )
    assert first["triage"]["command.always-false"]["class"] == "new check"
    assert "command.vfmath-dot" not in first["triage"]  # it passed
    p = run_cli("results", "show", runs[1], "--json", "--catalog", str(catalog), db=db)
    assert p.returncode == 0, p.stderr
    second = json.loads(p.stdout)
    good, bad = first["image"]["digest"], second["image"]["digest"]
    assert good != bad
    reg = second["triage"]["command.vfmath-dot"]
    assert (
        reg["class"] == "regression" and reg["digests"] == [good, bad] and reg["runs"][:2] == runs
    )
    assert "passed on the previous digest" in reg["reason"]
    never = second["triage"]["command.always-false"]
    assert never["class"] == "never passed" and runs[0][:8] in never["reason"]
    text = run_cli("results", "show", runs[1], "--catalog", str(catalog), db=db)
    assert text.returncode == 0, text.stderr
    assert "command.vfmath-dot: regression: passed on the previous digest" in text.stdout
