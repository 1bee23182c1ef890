"""A job-spec field that has no effect where the job runs is said, never silently ignored.

Every rule of the table (orchestrator/catalog/inert_fields.py) is run through the real
console script: a job whose only image is ``host`` writes the field, and ``valorch run
--job`` exits 2 naming the file, the line and the key, why it does nothing and what to do,
with no traceback, nothing run and no store created. The same field on a job with a
container image, where it acts, is not refused; nor is it written at its default value.
"""

from __future__ import annotations

import json

import pytest
from conftest import run_cli

from orchestrator.catalog.inert_fields import FIELD_RULES, FieldRule

CONTAINER_IMAGE = "cpu_debian12_py3.11_pytorch_2.13"


def _job(tmp_path, image: str, key: str, value) -> str:
    suite = "profiler" if key == "profiling_caps" else "smoke"
    path = tmp_path / "job.yaml"
    path.write_text(
        f"name: fields\nimages: [{image}]\nsuites:\n  - name: {suite}\n"
        f"    {key}: {json.dumps(value)}\n"
    )
    return str(path)


@pytest.mark.parametrize("rule", FIELD_RULES, ids=[r.key for r in FIELD_RULES])
def test_each_field_rule_exits_2_naming_file_line_and_key(rule: FieldRule, tmp_path):
    job = _job(tmp_path, "host", rule.key, rule.example)
    db = tmp_path / "store.sqlite"
    before = sorted(p.name for p in tmp_path.iterdir())
    proc = run_cli("run", "--job", job, "--no-matrix", db=db, cwd=tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert f"{job}:5: job spec: key 'suites.0.{rule.key}': has no effect" in proc.stderr
    assert "hint:" in proc.stderr and rule.hint in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not db.exists(), "nothing may be stored"
    assert sorted(p.name for p in tmp_path.iterdir()) == before, "nothing may be written"


@pytest.mark.parametrize("rule", FIELD_RULES, ids=[r.key for r in FIELD_RULES])
def test_the_field_is_accepted_where_it_acts(rule: FieldRule, tmp_path):
    job = _job(tmp_path, CONTAINER_IMAGE, rule.key, rule.example)
    proc = run_cli("jobs", "show", job, db=tmp_path / "s.sqlite")
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.parametrize("rule", FIELD_RULES, ids=[r.key for r in FIELD_RULES])
def test_the_field_at_its_default_is_not_refused(rule: FieldRule, tmp_path):
    default = False if isinstance(rule.example, bool) else None
    job = _job(tmp_path, "host", rule.key, default)
    proc = run_cli("jobs", "show", job, db=tmp_path / "s.sqlite")
    assert proc.returncode == 0, proc.stdout + proc.stderr
