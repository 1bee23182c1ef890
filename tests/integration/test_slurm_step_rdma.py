"""The Slurm batch step (executors/slurm/executor.STEP) of a multi-node GPU task, run here with
bash against the real engine as a node would run it: on a node the administrator opted in
(the feature ``rdma``) the container the engine creates has CAP_IPC_LOCK in its effective set
and an unlimited memlock (``ulimit -l``), and the job log says what the engine recorded; on
any other node, neither. This machine has no /dev/infiniband: the step passes no device and
says so (the device flags themselves: tests/unit/test_rdma_opt_in.py). No Slurm daemon is
needed: the step is a constant bash script."""

import subprocess
from pathlib import Path

import pytest

from orchestrator.executors.slurm.executor import step_argv, write_probe
from orchestrator.spec import HostSpec, ImageSpec, SuiteRef, Task

pytestmark = pytest.mark.docker

CAP_IPC_LOCK = 1 << 14  # linux/capability.h
PROBE = "grep ^CapEff: /proc/self/status; ulimit -l"
IMAGE = "valorch/base:bookworm"


def run_step(tmp_path: Path, node: str) -> subprocess.CompletedProcess[str]:
    image = ImageSpec(alias="g", reference=IMAGE, backend="cuda", local=True)
    hosts = (HostSpec(name="ib0"), HostSpec(name="ib1"))
    task = Task(
        image=image,
        suite=SuiteRef(name="multinode", nodes=2),
        host=hosts[0],
        checks=(),
        nodes=hosts,
    )
    argv = step_argv(task, "slurm-step-rdma", write_probe(tmp_path), rdma_nodes=("ib0", "ib1"))
    argv = argv[argv.index("bash") :]  # the step as srun starts it on each node
    at = argv.index(IMAGE)
    return subprocess.run(
        [*argv[: at + 1], "sh", "-c", PROBE],
        capture_output=True,
        text=True,
        timeout=300,
        env={"PATH": "/usr/local/bin:/usr/bin:/bin", "VALORCH_GPUS": "", "SLURMD_NODENAME": node},
    )


@pytest.fixture(scope="module")
def engine_raises_memlock() -> bool:
    """Whether this engine may start a container with an unlimited memlock: its runtime needs
    CAP_SYS_RESOURCE or an unlimited hard limit itself (an engine in a container, or a
    rootless one, may have neither: runc then fails "error setting rlimit type 8")."""
    done = subprocess.run(
        ["docker", "run", "--rm", "--network", "none", "--ulimit", "memlock=-1:-1", IMAGE, "true"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    return done.returncode == 0


def test_an_opted_in_nodes_container_is_created_with_ipc_lock_and_unlimited_memlock(tmp_path):
    log = run_step(tmp_path, "ib1").stderr
    # what the engine recorded for the container it created (docker inspect, in the step)
    assert (
        'valorch-step: rdma on ib1 ["CAP_IPC_LOCK"] [{"Name":"memlock","Hard":-1,"Soft":-1}] []'
        in log
    ), log
    assert "valorch-step: rdma: no verbs device under /dev/infiniband on ib1" in log


def test_inside_it_ipc_lock_is_effective_and_memlock_unlimited(tmp_path, engine_raises_memlock):
    proc = run_step(tmp_path, "ib1")
    if not engine_raises_memlock:  # the node's engine must be able to raise it: docs say so
        assert proc.returncode != 0 and "error setting rlimit" in proc.stderr, proc.stderr
        pytest.skip("this engine cannot raise RLIMIT_MEMLOCK (no CAP_SYS_RESOURCE)")
    assert proc.returncode == 0, proc.stderr
    cap_line, memlock = proc.stdout.split("\n")[:2]
    assert int(cap_line.split()[1], 16) & CAP_IPC_LOCK, proc.stdout
    assert memlock == "unlimited"


def test_a_node_without_the_feature_gives_neither(tmp_path):
    proc = run_step(tmp_path, "eth0")
    assert proc.returncode == 0, proc.stderr
    cap_line, memlock = proc.stdout.split("\n")[:2]
    assert not int(cap_line.split()[1], 16) & CAP_IPC_LOCK
    assert memlock != "unlimited"
    assert "rdma" not in proc.stderr
