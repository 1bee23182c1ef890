"""A job-spec field that has no effect where the job runs is said, never silently ignored.

Every suite field that declares where it acts (``spec.SuiteRef``: ``Annotated[...,
Applies(...)]``, orchestrator/applies.py) is run through the real console script: a job
whose images all run where the field does nothing (the local interpreter for a container's
limits, a container for ``pass_env``) writes the field, and ``valorch run --job`` exits 2
naming the file, the line and the key, why it does nothing and what to do, with no
traceback, nothing run and no store created. The same field on a job whose image honours
it is not refused; nor is it written at its default value.
"""

from __future__ import annotations

import json

import pytest
from conftest import run_cli

from orchestrator import applies
from orchestrator.spec import SuiteRef

CONTAINER_IMAGE = "cpu_debian12_py3.11_pytorch_2.13"
#: a value for each declared field, and an image of each executor
EXAMPLES = {
    "memory": "4g",
    "cpus": 2,
    "network": True,
    "profiling_caps": True,
    "pass_env": ["HOME"],
}
IMAGE = {"host": "host", "docker": CONTAINER_IMAGE}
DECLARED = dict(applies.fields(SuiteRef))


def _job(tmp_path, image: str, key: str, value) -> str:
    suite = "profiler" if key == "profiling_caps" else "smoke"
    path = tmp_path / "job.yaml"
    path.write_text(
        f"name: fields\nimages: [{image}]\nsuites:\n  - name: {suite}\n"
        f"    {key}: {json.dumps(value)}\n"
    )
    return str(path)


def _elsewhere(key: str) -> str:
    """An image on which ``key`` does nothing."""
    return next(IMAGE[e] for e in IMAGE if e not in DECLARED[key].executors)


def test_every_declared_field_has_an_example():
    assert set(DECLARED) == set(EXAMPLES)


@pytest.mark.parametrize("key", sorted(EXAMPLES))
def test_each_field_exits_2_naming_file_line_and_key_where_it_has_no_effect(key, tmp_path):
    job = _job(tmp_path, _elsewhere(key), key, EXAMPLES[key])
    db = tmp_path / "store.sqlite"
    before = sorted(p.name for p in tmp_path.iterdir())
    proc = run_cli("run", "--job", job, "--no-matrix", db=db, cwd=tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert f"{job}:5: job spec: key 'suites.0.{key}': has no effect" in proc.stderr
    assert f"hint: remove {key}, or add" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not db.exists(), "nothing may be stored"
    assert sorted(p.name for p in tmp_path.iterdir()) == before, "nothing may be written"


@pytest.mark.parametrize("key", sorted(EXAMPLES))
def test_the_field_is_accepted_where_it_acts(key, tmp_path):
    (acts,) = DECLARED[key].executors
    job = _job(tmp_path, IMAGE[acts], key, EXAMPLES[key])
    proc = run_cli("jobs", "show", job, db=tmp_path / "s.sqlite")
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.parametrize("key", sorted(EXAMPLES))
def test_the_field_at_its_default_is_not_refused(key, tmp_path):
    job = _job(tmp_path, _elsewhere(key), key, SuiteRef.model_fields[key].default)
    proc = run_cli("jobs", "show", job, db=tmp_path / "s.sqlite")
    assert proc.returncode == 0, proc.stdout + proc.stderr
