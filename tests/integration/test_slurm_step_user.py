"""The Slurm batch step (executors/slurm/executor.STEP), run here with bash against the real
engine as a node would run it: a CPU task without workloads runs as 65534 and still reads the
probe that `docker cp` put in /opt; a GPU task keeps uid 0, as the docker executor decides
(README, security). No Slurm daemon is needed: the step is a constant bash script."""

import subprocess
from pathlib import Path

import pytest

from orchestrator.executors.slurm.executor import STEP, step_argv, write_probe
from orchestrator.spec import HostSpec, ImageSpec, SuiteRef, Task

PROBE_CHECK = "id -u; test -r /opt/valorch/valorch_probe/__main__.py && echo probe-readable"


@pytest.mark.parametrize("backend, uid", [("cpu", "65534"), ("rocm", "0"), ("cuda", "0")])
def test_the_step_runs_the_task_as_the_docker_executor_would(
    tmp_path: Path, backend: str, uid: str
) -> None:
    image = ImageSpec(alias="b", reference="valorch/base:bookworm", backend=backend, local=True)
    task = Task(image=image, suite=SuiteRef(name="smoke"), host=HostSpec(name="slurm"), checks=())
    argv = step_argv(task, "slurm-step-test", write_probe(tmp_path))
    assert argv[2] == STEP
    at = argv.index("valorch/base:bookworm")
    proc = subprocess.run(
        [*argv[: at + 1], "sh", "-c", PROBE_CHECK],
        capture_output=True,
        text=True,
        timeout=300,
        env={"PATH": "/usr/local/bin:/usr/bin:/bin", "VALORCH_GPUS": ""},
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == [uid, "probe-readable"], (proc.stdout, proc.stderr)
    assert "valorch-step: exit 0" in proc.stderr
