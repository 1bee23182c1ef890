"""RDMA for a multi-node GPU task on the real two-node Slurm test cluster (scripts/start-slurm.sh:
real sbatch, srun and both slurmd): the batch script and step valorch submits for such a task
(SlurmCluster.submit, step_argv) start a container on each node, and the node opted in (the
feature rdma; here named to step_argv directly, since the test cluster's slurm.conf is shared
and its nodes do not carry the feature) gets CAP_IPC_LOCK and an unlimited memlock, as the
engine recorded them (docker inspect, in the node's job log); the other node gets neither.

Not through `valorch run`: the test cluster has one CUDA and one ROCm node with fake GPUs, so
no two-node GPU gang can be placed there, and only GPU gangs get RDMA. The job asks for two
CPU nodes instead of GPUs; everything else is the step a GPU gang gets."""

import os
import re
import subprocess
from pathlib import Path

import pytest
from conftest import ROOT

from orchestrator.executors.slurm.client import SlurmCluster, SlurmRequirement
from orchestrator.executors.slurm.executor import step_argv, sweep_argv, write_probe
from orchestrator.spec import HostSpec, ImageSpec, SuiteRef, Task

pytestmark = [pytest.mark.slurm, pytest.mark.docker]

START = ROOT / "scripts" / "start-slurm.sh"
IMAGE = "valorch/base:bookworm"
NODES = ("valorch-cuda0", "valorch-rocm0")
CAP_IPC_LOCK = 1 << 14  # linux/capability.h
PROBE = "grep ^CapEff: /proc/self/status; ulimit -l"


@pytest.fixture(scope="module")
def slurm():
    if os.geteuid() != 0:
        pytest.skip(
            "the Slurm test cluster needs root (scripts/start-slurm.sh installs and starts daemons)"
        )
    done = subprocess.run(["bash", str(START)], capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]


def gang() -> Task:
    image = ImageSpec(alias="g", reference=IMAGE, backend="cuda", local=True)
    hosts = tuple(HostSpec(name=n, endpoint=f"slurm://{n}") for n in NODES)
    return Task(
        image=image,
        suite=SuiteRef(name="multinode", nodes=2),
        host=hosts[0],
        checks=(),
        nodes=hosts,
    )


def test_the_opted_in_node_of_a_gang_gets_ipc_lock_and_memlock_and_the_other_none(
    slurm, tmp_path: Path
):
    task, run_id = gang(), "rdma-slurm-test"
    argv = step_argv(task, run_id, write_probe(tmp_path), rdma_nodes=(NODES[0],))
    at = argv.index(IMAGE)
    argv = [*argv[: at + 1], "sh", "-c", PROBE]  # a check of the container instead of the probe
    cluster = SlurmCluster()
    workdir = tmp_path / "run"
    workdir.mkdir()
    job = cluster.submit(
        "rdma", SlurmRequirement("cpu", nodes=2), argv, workdir, 120, after=sweep_argv(task, run_id)
    )
    cluster.watch(job, queue_timeout=300, run_timeout=300)
    logs = {}
    for path in workdir.glob(f"slurm-{job}-*.err"):
        text = path.read_text(errors="replace")
        node = next((n for n in NODES if f" on {n}" in text), None)
        if node:
            logs[node] = text
    opted = logs[NODES[0]]
    # what the engine recorded for the container it created on the opted-in node
    assert (
        f'valorch-step: rdma on {NODES[0]} ["CAP_IPC_LOCK"] '
        '[{"Name":"memlock","Hard":-1,"Soft":-1}] []' in opted
    ), opted
    assert f"no verbs device under /dev/infiniband on {NODES[0]}" in opted
    other = logs.get(NODES[1], "")
    assert "rdma" not in other, other
    # inside the containers that ran to their end (here the engine cannot raise the memlock
    # limit: tests/integration/test_slurm_step_rdma.py; srun may end the other rank early)
    for node, text in logs.items():
        if "valorch-step: exit 0" not in text:
            continue
        rank = re.search(rf"rank (\d+) of 2 on {node}", text).group(1)
        cap_line, memlock = (workdir / f"valorch-{job}-{rank}.stdout").read_text().split("\n")[:2]
        ipc_lock = bool(int(cap_line.split()[1], 16) & CAP_IPC_LOCK)
        assert (ipc_lock, memlock == "unlimited") == (
            (True, True) if node == NODES[0] else (False, False)
        )
    # both nodes' containers are gone (the step's EXIT trap, then the sweep)
    left = subprocess.run(
        ["docker", "ps", "-aq", "--filter", f"label=org.valorch.run={run_id}"],
        capture_output=True,
        text=True,
    ).stdout.split()
    assert left == []
