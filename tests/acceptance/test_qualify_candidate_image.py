"""``valorch qualify --image CANDIDATE --baseline NAME``: an image that is not in the catalog
(a tag just built) is qualified against the baseline of the image it succeeds, running the
release job's suites on it, without editing the catalog: a sound candidate is qualified
(exit 0), one that breaks a check that passed in the baseline is not (exit 1)."""

import hashlib
import json
import subprocess
import uuid
from pathlib import Path

import pytest
import recipes_support
from root_helpers import ROOT

pytestmark = pytest.mark.docker

JOB = """name: torch-release
images: [cpu_debian12_py3.11_pytorch_2.13]
suites:
  - name: smoke
    checks: [env.version.python]
  - name: command
    commands:
      - id: torch-major-2
        argv: [python3, -c, "import sys, torch; sys.exit(0 if int(torch.__version__.split('.')[0]) >= 2 else 1)"]
"""


def _catalog_hash():
    return hashlib.sha256(
        b"".join(p.read_bytes() for p in sorted((ROOT / "images").glob("*.yaml")))
    ).hexdigest()


@pytest.fixture
def candidates():
    tag = uuid.uuid4().hex[:10]
    made = {
        "good": f"valorch-candidate/torch:good-{tag}",
        "bad": f"valorch-candidate/torch:bad-{tag}",
    }
    subprocess.run(["docker", "tag", "valorch/test:pip-torch", made["good"]], check=True)
    subprocess.run(["docker", "tag", "valorch/test:debian-torch", made["bad"]], check=True)
    yield made
    for ref in made.values():
        subprocess.run(["docker", "rmi", ref], capture_output=True)


def test_candidate_qualified_or_not_against_its_predecessor(cli, tmp_path, candidates):
    before = _catalog_hash()
    job = tmp_path / "release.yaml"
    job.write_text(JOB)
    base = cli("run", "--job", str(job), "--no-matrix", "--json")
    assert base.returncode == 0, base.stderr[-2000:]
    run_id = json.loads(base.stdout)[0]["run"]
    assert cli("baseline", "set", "torch-2.13", run_id).returncode == 0

    good = cli(
        "qualify",
        "--job",
        str(job),
        "--image",
        candidates["good"],
        "--baseline",
        "torch-2.13",
        "--out-dir",
        str(tmp_path / "good"),
    )
    assert good.returncode == 0, good.stderr[-3000:]
    assert "qualified" in good.stderr and "not qualified" not in good.stderr

    bad = cli(
        "qualify",
        "--job",
        str(job),
        "--image",
        candidates["bad"],
        "--baseline",
        "torch-2.13",
        "--out-dir",
        str(tmp_path / "bad"),
    )
    assert bad.returncode == 1, bad.stderr[-3000:]
    report = (tmp_path / "bad" / "report.md").read_text()
    assert (
        "1 failing (1 regressed)" in report  # the verdict's count says it regressed
        and "command.torch-major-2" in report
        and candidates["bad"].split(":")[1] in report
    )
    assert _catalog_hash() == before  # the catalog was not edited


def test_candidate_against_a_many_image_baseline_is_bad_input(cli, tmp_path, candidates):
    both = cli(
        "run",
        "--image",
        "cpu_debian12_py3.11_pytorch_2.13",
        "--image",
        "cpu_debian12_py3.11_pytorch_1.13",
        "--suite",
        "smoke",
        "--check",
        "env.version.python",
        "--no-matrix",
        "--json",
    )
    assert both.returncode == 0, both.stderr[-2000:]
    batch = json.loads(both.stdout)[0]["batch"]
    proc = cli(
        "qualify",
        "--image",
        candidates["good"],
        "--baseline",
        batch,
        "--out-dir",
        str(tmp_path / "q"),
    )
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert "baseline set" in proc.stderr and "Traceback" not in proc.stderr


def test_nothing_to_qualify_is_bad_input(cli):
    proc = cli("qualify", "--baseline", "x")
    assert proc.returncode == 2 and "--image" in proc.stderr and "--job" in proc.stderr


def test_runner_example_builds_the_dockerfile_and_qualifies_it(cli, tmp_path):
    """The example workflow's run steps, in order, as written: Dockerfile.rocm built on a
    local base (the workflow's input), the runner preflighted for that candidate, then the
    candidate qualified against a baseline."""
    import os
    import shutil
    import sys

    work = tmp_path / "checkout"  # what the runner's checkout holds, with a light release job
    (work / ".venv" / "bin").mkdir(parents=True)
    (work / ".venv" / "bin" / "valorch").symlink_to(Path(sys.executable).with_name("valorch"))
    shutil.copy(ROOT / "Dockerfile.rocm", work / "Dockerfile.rocm")
    (work / "jobs").mkdir()
    (work / "jobs" / "release.yaml").write_text(JOB)
    shutil.copy(ROOT / "jobs" / "known-issues.yaml", work / "jobs" / "known-issues.yaml")
    db = tmp_path / "runner.sqlite"
    base = cli("run", "--job", str(work / "jobs" / "release.yaml"), "--no-matrix", "--json", db=db)
    assert base.returncode == 0, base.stderr[-2000:]
    assert (
        cli("baseline", "set", "torch-2.13", json.loads(base.stdout)[0]["run"], db=db).returncode
        == 0
    )
    # the workflow names it valorch-candidate/rocm:SHA (a ROCm image: it needs an AMD GPU host);
    # on this CPU machine the same build gets a name that says nothing of a GPU
    candidate = f"valorch-candidate/local:{uuid.uuid4().hex[:12]}"
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("VALORCH_")},
        "VALORCH_DB": str(db),
        "BASE_IMAGE": "valorch/test:pip-torch",
        "VALORCH_EXTRAS": "",
        "BASELINE": "torch-2.13",
        "CANDIDATE": candidate,
        "GITHUB_SHA": "0123abc",
    }
    try:
        # every run step of the job, in its order (build, preflight, qualify, summary)
        _env, ordered = recipes_support.github_steps(
            ROOT / "examples" / "github-actions" / "candidate-qualification.yml", "candidate", {}
        )
        env["GITHUB_STEP_SUMMARY"] = str(work / "summary.md")
        ran = recipes_support.run_steps(
            ordered, work, env, "bash --noprofile --norc -eo pipefail -c"
        )
        assert not recipes_support.failures(ran), recipes_support.failures(ran)
        assert [r.step.name for r in ran][:3] == [
            "Build the candidate",
            "Preflight the runner",
            "Qualify the candidate",
        ]
        labels = json.loads(
            subprocess.run(
                ["docker", "image", "inspect", candidate, "--format", "{{json .Config.Labels}}"],
                capture_output=True,
                text=True,
            ).stdout
        )
        assert labels["org.opencontainers.image.base.name"] == "valorch/test:pip-torch"
        assert labels["org.opencontainers.image.revision"] == "0123abc"
        assert "Verdict: ✅ qualified" in (work / "qualification" / "report.md").read_text()
    finally:
        subprocess.run(["docker", "rmi", candidate], capture_output=True)
