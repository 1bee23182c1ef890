"""`valorch jobs runners` and the example GitHub Actions workflows: every
workflow job's runs-on must be exactly the label set valorch says the job spec
it runs needs."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest
import yaml

from orchestrator.catalog.core import Catalog
from orchestrator.services.jobs import runner_sets
from orchestrator.spec import JobSpec

ROOT = Path(__file__).resolve().parents[2]
WORKFLOWS = sorted((ROOT / "examples" / "github-actions").glob("*.yml"))
CATALOG = Catalog.load(ROOT / "images")


def job_specs_run_by(step_script: str) -> list[str]:
    """The ``--job FILE`` of every valorch run/qualify command in a step's script."""
    found = []
    for line in step_script.replace("\\\n", " ").splitlines():
        words = shlex.split(line, comments=True) if "valorch" in line else []
        if any(w.endswith("valorch") for w in words) and ("run" in words or "qualify" in words):
            found += [words[i + 1] for i, w in enumerate(words[:-1]) if w in ("--job", "-j")]
    return found


def test_there_are_a_nightly_and_a_release_workflow() -> None:
    assert {p.name for p in WORKFLOWS} >= {"nightly.yml", "release-qualification.yml"}


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_workflow_runs_on_equals_valorch_jobs_runners(path: Path, cli) -> None:
    doc = yaml.safe_load(path.read_text())
    triggers = doc.get("on", doc.get(True))  # YAML 1.1 reads a bare `on` key as true
    assert triggers, f"{path.name}: no trigger"
    checked = 0
    for name, job in doc["jobs"].items():
        if "runs-on" in job and "self-hosted" not in job["runs-on"]:
            continue  # a publishing job (GitHub Pages) runs no valorch
        scripts = [s["run"] for s in job["steps"] if "run" in s]
        specs = [spec for script in scripts for spec in job_specs_run_by(script)]
        assert specs, f"{path.name}: job {name} runs no valorch job spec"
        for spec in specs:
            proc = cli("jobs", "runners", spec, "--json", cwd=ROOT)
            assert proc.returncode == 0, proc.stderr
            sets = json.loads(proc.stdout)
            assert [s["runs-on"] for s in sets] == [job["runs-on"]], (path.name, spec, sets)
            checked += 1
    assert checked


def test_scheduled_nightly_on_gfx942_and_release_qualification_with_a_baseline() -> None:
    nightly = yaml.safe_load((ROOT / "examples/github-actions/nightly.yml").read_text())
    assert nightly[True]["schedule"][0]["cron"]
    job = nightly["jobs"]["nightly"]
    assert job["runs-on"] == ["self-hosted", "rocm", "gfx942"]
    script = "\n".join(s.get("run", "") for s in job["steps"])
    assert re.search(r"valorch run --job jobs/nightly.yaml --junit out.xml", script)
    # the images come from a registry: digests checked, pinned images pulled, then the runner
    # preflighted (it looks for the pinned digests the run uses), then the run
    steps = [s.get("run", "") for s in job["steps"]]
    order = [
        next(i for i, s in enumerate(steps) if word in s)
        for word in (
            "valorch images check",
            "valorch images pull",
            "valorch hosts check",
            "valorch run --job",
        )
    ]
    assert order == sorted(order) and "images list --present" in script
    assert any(s.get("uses", "").startswith("actions/upload-artifact") for s in job["steps"])
    release = yaml.safe_load(
        (ROOT / "examples/github-actions/release-qualification.yml").read_text()
    )
    job = release["jobs"]["qualify"]
    script = "\n".join(s.get("run", "") for s in job["steps"])
    assert 'valorch qualify --job jobs/release.yaml --baseline "$BASELINE"' in script
    assert "${{" not in script  # inputs reach the script through env, never spliced in


def test_runner_sets_per_backend_with_archs_and_labels() -> None:
    cuda = next(i.alias for i in CATALOG.images if i.backend == "cuda")
    rocm = next(i.alias for i in CATALOG.images if i.backend == "rocm")
    job = JobSpec(
        name="mixed",
        images=(rocm, cuda, "cpu_debian11_py3.9", "host"),
        suites=("smoke",),
        labels=("gfx942", "sm_90", "ib"),
    )
    sets = {tuple(s["runs-on"]): s["images"] for s in runner_sets(job, CATALOG)}
    assert sets == {
        ("self-hosted", "rocm", "gfx942", "ib"): [rocm],
        ("self-hosted", "cuda", "sm_90", "ib"): [cuda],
        ("self-hosted", "cpu", "ib"): ["cpu_debian11_py3.9", "host"],
    }
    cpu_only = runner_sets(job, CATALOG, cpu_only=True)
    assert [s["runs-on"] for s in cpu_only] == [["self-hosted", "cpu", "ib"]]


def test_unknown_job_is_exit_2_naming_the_jobs_dir(cli) -> None:
    proc = cli("jobs", "runners", "no-such-job")
    assert proc.returncode == 2
    assert "no job named 'no-such-job'" in proc.stderr and "Traceback" not in proc.stderr
