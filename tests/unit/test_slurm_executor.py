"""The slurm executor's pure parts: sinfo → hosts, the step's argv, the job log."""

from __future__ import annotations

import shlex
import subprocess
from pathlib import Path

from orchestrator.catalog.core import Catalog
from orchestrator.executors.slurm.client import batch_script
from orchestrator.executors.slurm.executor import STEP, parse_job_log, requirement, step_argv
from orchestrator.executors.slurm.nodes import hosts_from_sinfo
from orchestrator.hosts.match import Requirement, shortfall
from orchestrator.scheduling.plan import suite_checks
from orchestrator.spec import HostSpec, SuiteRef, Task

ROOT = Path(__file__).resolve().parents[2]
SINFO = (
    "valorch-cuda0|cuda,sm_90|gpu:h100:1\n"
    "valorch-rocm0|rocm,gfx942|gpu:mi300x:2(S:0-1)\n"
    "valorch-rocm0|rocm,gfx942|gpu:mi300x:2(S:0-1)\n"  # once per partition
    "cpu0|(null)|(null)\n"
)


def test_sinfo_nodes_become_hosts_that_the_normal_matching_uses() -> None:
    cuda, rocm, cpu = hosts_from_sinfo(SINFO)
    assert [g.arch for g in rocm.gpus] == ["gfx942", "gfx942"] and rocm.gpus[0].vendor == "amd"
    assert rocm.gpus[1].product == "mi300x" and "gfx942" in rocm.labels
    assert [(g.vendor, g.arch) for g in cuda.gpus] == [("nvidia", "sm_90")] and cuda.nvidia_runtime
    assert cpu.gpus == () and cpu.labels == ("cpu",)
    assert not shortfall(Requirement("rocm", labels=("gfx942",)), rocm)
    assert shortfall(Requirement("rocm", labels=("gfx90a",)), rocm) == ["label 'gfx90a'"]
    assert shortfall(Requirement("rocm", gpus=3), rocm)


def test_step_script_is_valid_bash_and_task_values_stay_separate_arguments(tmp_path: Path) -> None:
    assert subprocess.run(["bash", "-n", "-c", STEP]).returncode == 0
    image = Catalog.load(ROOT / "images").resolve("cpu_debian12_py3.11_pytorch_2.13")
    suite = SuiteRef(name="smoke", checks=("env.*",))
    task = Task(image=image, suite=suite, host=HostSpec(name="slurm"), checks=suite_checks(suite))
    argv = step_argv(task, "run-1", tmp_path / "probe.tar")
    assert argv[:4] == ["bash", "-c", STEP, "valorch-step"]
    assert argv[4:7] == ["cpu", str(tmp_path / "probe.tar"), "never"]
    n = int(argv[7])
    opts = argv[8 : 8 + n]
    assert opts[:2] == ["--network", "none"] and "org.valorch.run=run-1" in opts
    assert argv[8 + n : 10 + n] == ["", "0"]  # no RDMA node, no RDMA option
    assert argv[10 + n] == "valorch/test:pip-torch"
    script = batch_script(argv)
    command = script.split("\nexec ", 1)[1].rsplit(" >", 1)[0]  # the step text spans lines
    assert shlex.split(command) == argv  # every element quoted: it round-trips
    assert requirement(task).backend == "cpu" and requirement(task).gpus == 0


def test_job_log_gives_node_gpus_container_env_and_exit() -> None:
    log = (
        "valorch: job 12 on valorch-rocm0 gpus=1\n"
        "valorch-step: no /dev/kfd on valorch-rocm0\n"
        "valorch-step: container 1463b8ac\n"
        "valorch-step: env ROCR_VISIBLE_DEVICES=0\n"
        "valorch-step: env VALORCH_GPUS=1\n"
        "valorch-step: image valorch/base@sha256:abc\n"
        "valorch-step: exit 0\n"
    )
    info = parse_job_log(log)
    assert info == {
        "node": "valorch-rocm0",
        "gpus": "1",
        "container": "1463b8ac",
        "container_env": {"ROCR_VISIBLE_DEVICES": "0", "VALORCH_GPUS": "1"},
        "image": "valorch/base@sha256:abc",
        "exit": "0",
    }
    assert parse_job_log("valorch-step: create-failed on n1\n")["failed"] == "create-failed"
