"""The Slurm submission layer against a real slurmctld + two slurmd.

The cluster comes from scripts/start-slurm.sh: node valorch-rocm0 (rocm, gfx942,
gpu:mi300x:2) and valorch-cuda0 (cuda, sm_90, gpu:h100:1), GPUs backed by
device nodes cloned from /dev/null. The daemons are left running for the next
session; scripts/stop-slurm.sh stops them.
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from orchestrator.executors.slurm.client import (
    TERMINAL,
    SlurmCluster,
    SlurmRequirement,
    SlurmUnmatched,
)

pytestmark = pytest.mark.slurm

ROOT = Path(__file__).resolve().parents[2]
START = ROOT / "scripts" / "start-slurm.sh"
STATE = Path(os.environ.get("VALORCH_SLURM_STATE", "/var/lib/valorch-slurm"))
CONF = Path(os.environ.get("VALORCH_SLURM_DIR", "/etc/slurm")) / "slurm.conf"
GPU_ENV = (
    "sh",
    "-c",
    'echo "node=$SLURMD_NODENAME"; echo "SLURM_JOB_GPUS=$SLURM_JOB_GPUS"; '
    'echo "ROCR_VISIBLE_DEVICES=$ROCR_VISIBLE_DEVICES"; echo "VALORCH_GPUS=$VALORCH_GPUS"',
)


@pytest.fixture
def jobs(cluster: SlurmCluster):
    """Job ids a test submits; whatever is still queued at the end is cancelled."""
    submitted: list[str] = []
    yield submitted
    for job_id in submitted:
        try:
            if cluster.state(job_id) not in TERMINAL:
                cluster.cancel(job_id)
        except Exception:  # noqa: BLE001 - best-effort cleanup must not hide the test's own failure
            pass


def poll(fn, until, timeout: float = 30.0):
    end = time.monotonic() + timeout
    while True:
        value = fn()
        if until(value) or time.monotonic() > end:
            return value
        time.sleep(0.25)


def wait(cluster: SlurmCluster, job: str, timeout: float) -> str:
    """The job's final state (SlurmError when it is not over within ``timeout``)."""
    return cluster.watch(job, queue_timeout=timeout, run_timeout=timeout)


def lines(path: Path) -> dict[str, str]:
    return dict(line.split("=", 1) for line in path.read_text().splitlines() if "=" in line)


def test_start_is_idempotent_and_nodes_idle(cluster: SlurmCluster) -> None:
    before = (STATE / "pids").read_text()
    t0 = time.monotonic()
    proc = subprocess.run(["bash", str(START)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert time.monotonic() - t0 < 30
    assert (STATE / "pids").read_text() == before  # same daemons, nothing restarted
    sinfo = subprocess.run(
        ["sinfo", "-h", "-N", "-o", "%N %f %G"],
        capture_output=True,
        text=True,
        env={**os.environ, "SLURM_CONF": str(CONF)},
        check=True,
    ).stdout
    assert "valorch-rocm0 rocm,gfx942 gpu:mi300x:2" in sinfo
    assert "valorch-cuda0 cuda,sm_90 gpu:h100:1" in sinfo
    assert cluster.features() >= {"rocm", "gfx942", "cuda", "sm_90"}


def test_gfx942_job_runs_on_rocm_node_with_gpu_env(
    cluster: SlurmCluster, jobs: list[str], tmp_path: Path
) -> None:
    req = SlurmRequirement("rocm", archs=("gfx942",), gpus=1)
    job = cluster.submit(
        "gpu-env",
        req,
        GPU_ENV,
        tmp_path,
        deadline_s=60,
    )
    jobs.append(job)
    assert wait(cluster, job, 60) == "COMPLETED", (tmp_path / f"slurm-{job}.out").read_text()
    assert cluster.show(job)["NodeList"] == "valorch-rocm0"
    out = lines(tmp_path / f"valorch-{job}.stdout")
    assert out["node"] == "valorch-rocm0"
    assert out["SLURM_JOB_GPUS"] in {"0", "1"}
    assert out["ROCR_VISIBLE_DEVICES"] in {"0", "1"}
    assert out["VALORCH_GPUS"] == out["SLURM_JOB_GPUS"]
    assert "gpus=" + out["SLURM_JOB_GPUS"] in (tmp_path / f"slurm-{job}.out").read_text()


def test_two_gpus_and_cuda_alternatives(
    cluster: SlurmCluster, jobs: list[str], tmp_path: Path
) -> None:
    two = cluster.submit(
        "two",
        SlurmRequirement("rocm", archs=("gfx942",), gpus=2, gpu_type="mi300x"),
        GPU_ENV,
        tmp_path,
        60,
    )
    # sm_80 exists nowhere: dropped from the alternatives instead of refused by Slurm
    cc = cluster.submit(
        "cc",
        SlurmRequirement("cuda", archs=("8.0", "9.0"), gpus=1),
        GPU_ENV,
        tmp_path,
        60,
    )
    jobs += [two, cc]
    assert wait(cluster, two, 60) == "COMPLETED"
    assert wait(cluster, cc, 60) == "COMPLETED"
    assert lines(tmp_path / f"valorch-{two}.stdout")["SLURM_JOB_GPUS"] == "0,1"
    assert lines(tmp_path / f"valorch-{cc}.stdout")["node"] == "valorch-cuda0"


def test_gfx90a_is_unmatched(
    cluster: SlurmCluster, jobs: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    req = SlurmRequirement("rocm", archs=("gfx90a",), gpus=1)
    with pytest.raises(SlurmUnmatched, match="gfx90a") as before:
        cluster.submit("mi250", req, ["true"], tmp_path, 60)
    assert "gfx942" in str(before.value)  # says what the cluster has
    # Without the feature pre-check Slurm itself refuses, and that is unmatched too.
    monkeypatch.setattr(cluster, "features", lambda: None)
    with pytest.raises(SlurmUnmatched) as refused:
        cluster.submit("mi250", req, ["true"], tmp_path, 60)
    assert "Invalid feature specification" in str(refused.value)
    queued = subprocess.run(
        ["squeue", "-h", "-n", "valorch-mi250"],
        capture_output=True,
        text=True,
        env={**os.environ, "SLURM_CONF": str(CONF)},
        check=True,
    ).stdout
    assert queued.strip() == ""


def test_features_never_together_are_unmatched(
    cluster: SlurmCluster, jobs: list[str], tmp_path: Path
) -> None:
    # gfx942 and sm_90 both exist, but on no single node: Slurm refuses at submit.
    for req in (
        SlurmRequirement("rocm", archs=("gfx942",), gpus=1, labels=("sm_90",)),
        SlurmRequirement("cpu", labels=("gfx942", "sm_90")),
    ):
        with pytest.raises(SlurmUnmatched, match="Requested node configuration is not available"):
            cluster.submit("never", req, ["true"], tmp_path, 60)


def test_pending_bad_constraints_is_unmatched(
    cluster: SlurmCluster, jobs: list[str], tmp_path: Path
) -> None:
    # A job accepted while held (or before the nodes changed) is checked only when
    # the scheduler looks at it, and then pends with BadConstraints forever.
    proc = subprocess.run(
        [
            "sbatch",
            "--parsable",
            "--hold",
            "--partition=valorch",
            "--constraint=gfx942&sm_90",
            f"--output={tmp_path}/held-%j.out",
            "--wrap",
            "true",
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "SLURM_CONF": str(CONF)},
    )
    assert proc.returncode == 0, proc.stderr
    job = proc.stdout.strip().split(";")[0]
    jobs.append(job)
    assert cluster.reason(job) == "JobHeldUser"
    subprocess.run(
        ["scontrol", "release", job], check=True, env={**os.environ, "SLURM_CONF": str(CONF)}
    )
    assert (
        poll(lambda: cluster.reason(job), lambda r: r not in ("None", "JobHeldUser"))
        == "BadConstraints"
    )
    assert cluster.state(job) == "PENDING"
    with pytest.raises(SlurmUnmatched, match="BadConstraints"):
        wait(cluster, job, 30)
    cluster.cancel(job)
    assert poll(lambda: cluster.state(job), lambda s: s in TERMINAL) == "CANCELLED"


def test_scancel_cancels_a_pending_job(
    cluster: SlurmCluster, jobs: list[str], tmp_path: Path
) -> None:
    rocm2 = SlurmRequirement("rocm", archs=("gfx942",), gpus=2)
    holder = cluster.submit("holder", rocm2, ["sleep", "120"], tmp_path, 300)
    jobs.append(holder)
    assert poll(lambda: cluster.state(holder), lambda s: s != "PENDING") == "RUNNING"
    waiting = cluster.submit(
        "waiting", SlurmRequirement("rocm", archs=("gfx942",), gpus=1), ["true"], tmp_path, 60
    )
    jobs.append(waiting)
    assert poll(lambda: cluster.reason(waiting), lambda r: r != "None") == "Resources"
    assert cluster.state(waiting) == "PENDING"
    cluster.cancel(waiting)
    assert poll(lambda: cluster.state(waiting), lambda s: s in TERMINAL) == "CANCELLED"
    cluster.cancel(holder)
    assert poll(lambda: cluster.state(holder), lambda s: s in TERMINAL) == "CANCELLED"
    assert not (tmp_path / f"valorch-{waiting}.stdout").exists()  # it never ran


@pytest.mark.docker
def test_job_runs_a_container_on_the_allocated_node(
    cluster: SlurmCluster, jobs: list[str], tmp_path: Path
) -> None:
    images = [
        i
        for i in ("valorch/base:bookworm", "valorch/base:bullseye")
        if subprocess.run(["docker", "image", "inspect", i], capture_output=True).returncode == 0
    ]
    if not images:
        pytest.fail("no valorch/base image: run scripts/build-test-images.sh first")
    argv = [
        "docker",
        "run",
        "--rm",
        "--network",
        "none",
        "-e",
        "ROCR_VISIBLE_DEVICES",
        images[0],
        "python3",
        "-c",
        "import os; print(42); print(os.environ['ROCR_VISIBLE_DEVICES'])",
    ]
    job = cluster.submit(
        "docker",
        SlurmRequirement("rocm", archs=("gfx942",), gpus=1),
        argv,
        tmp_path,
        120,
    )
    jobs.append(job)
    state = wait(cluster, job, 120)
    assert state == "COMPLETED", (tmp_path / f"slurm-{job}.out").read_text()
    first, second = (tmp_path / f"valorch-{job}.stdout").read_text().split()
    assert first == "42"
    assert second in {"0", "1"}
