"""A 2-node gloo task on the real two-node Slurm test cluster (scripts/start-slurm.sh: both
slurmd instances, real sbatch and srun), through the real CLI: one job with --nodes=2
--ntasks-per-node=1, srun starting the container on each node, the rendezvous from
SLURM_JOB_NODELIST; exact values and busbw stored. Then one node's container is killed on
purpose, or frozen (docker pause): the task ends, naming that node, with no container and no
Slurm job left."""

import json
import os
import sqlite3
import subprocess
import time

import pytest
from conftest import ROOT, VALORCH
from probe_logs import wait_for_a_result

pytestmark = [pytest.mark.slurm, pytest.mark.docker]

START = ROOT / "scripts" / "start-slurm.sh"
ALIAS = "cpu_debian12_py3.11_pytorch_1.13"


@pytest.fixture(scope="module")
def slurm():
    if os.geteuid() != 0:
        pytest.skip(
            "the Slurm test cluster needs root (scripts/start-slurm.sh installs and starts daemons)"
        )
    done = subprocess.run(["bash", str(START)], capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]


def job(tmp_path, deadline=60):
    path = tmp_path / "job.yaml"
    path.write_text(
        f"name: slurm-two-nodes\nimages: [{ALIAS}]\nsuites:\n"
        f"  - {{name: multinode, nodes: 2, deadline: {deadline}}}\n"
    )
    return path


def run_args(tmp_path, db, deadline=60):
    return [
        VALORCH,
        "run",
        "--job",
        str(job(tmp_path, deadline)),
        "--executor",
        "slurm",
        "--slurm-spool",
        str(tmp_path / "spool"),
        "--json",
        "--no-gate",
        "--db",
        str(db),
    ]


def our_containers(run_id=None):
    label = f"org.valorch.run={run_id}" if run_id else "org.valorch.run"
    return subprocess.run(
        ["docker", "ps", "-aq", "--filter", f"label={label}"], capture_output=True, text=True
    ).stdout.split()


def queue():
    return subprocess.run(
        ["squeue", "-h", "-o", "%i %j"], capture_output=True, text=True
    ).stdout.split("\n")


def test_two_slurm_nodes_run_gloo_collectives_exactly_with_busbw(slurm, tmp_path):
    db = tmp_path / "v.sqlite"
    env = {k: v for k, v in os.environ.items() if k != "VALORCH_DB"}
    res = subprocess.run(
        run_args(tmp_path, db), capture_output=True, text=True, cwd=ROOT, env=env, timeout=300
    )
    assert res.returncode == 0, res.stderr[-3000:]
    (run,) = json.loads(res.stdout)
    by = {r["check"].removesuffix("[2-nodes]"): r for r in run["results"]}
    assert all(r["check"].endswith("[2-nodes]") for r in run["results"])  # a row per node count
    assert {r["status"] for r in run["results"]} == {"pass"}, by
    assert (
        "across 2 ranks on 2 nodes (gloo): exact on every rank"
        in by["multinode.all_reduce"]["message"]
    )
    assert len(by["multinode.busbw.all_reduce"]["samples"]) == 5
    assert by["multinode.busbw.broadcast"]["metrics"]["busbw_factor"] == 1.0
    con = sqlite3.connect(db)
    (probe,) = con.execute("SELECT json_extract(meta, '$.multinode.probe') FROM run").fetchone()
    probe = json.loads(probe)
    assert sorted(n["host"] for n in probe["nodes"]) == ["valorch-cuda0", "valorch-rocm0"]
    assert probe["slurm"]["state"] == "COMPLETED" and probe["slurm"]["rendezvous"].startswith(
        "127.0.0.1:"
    )
    script = next((tmp_path / "spool").rglob("*.sbatch")).read_text()
    assert (
        'scontrol show hostnames "$SLURM_JOB_NODELIST"' in script
        and "srun --nodes=2 --ntasks-per-node=1" in script
    )
    assert our_containers(run["run"]) == []


@pytest.mark.parametrize(
    "fault,status,what,when",
    [
        ("kill", "error", "died", "rendezvous"),
        ("pause", "timeout", "hung", "rendezvous"),
        ("kill", "error", "died", "mid-collective"),
    ],
)
def test_a_killed_or_frozen_node_ends_the_job_naming_the_node(
    slurm, tmp_path, fault, status, what, when
):
    db = tmp_path / "v.sqlite"
    env = {k: v for k, v in os.environ.items() if k != "VALORCH_DB"}
    proc = subprocess.Popen(
        run_args(tmp_path, db, deadline=20),
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    victim, rank0 = None, None
    try:
        for _ in range(1200):  # until both ranks' containers run; then rank 1's is killed
            for cid in subprocess.run(
                [
                    "docker",
                    "ps",
                    "-q",
                    "--filter",
                    "label=org.valorch.run",
                    "--filter",
                    "status=running",
                ],
                capture_output=True,
                text=True,
            ).stdout.split():
                envs = subprocess.run(
                    ["docker", "inspect", "--format", "{{json .Config.Env}}", cid],
                    capture_output=True,
                    text=True,
                ).stdout
                if '"RANK=0"' in envs:
                    rank0 = cid
                if '"RANK=1"' in envs:
                    victim = (
                        cid,
                        next(e for e in json.loads(envs) if e.startswith("VALORCH_NODE=")).split(
                            "="
                        )[1],
                    )
            # mid-collective needs rank 0's container too: it may start after rank 1's
            if victim and (rank0 or when == "rendezvous"):
                break
            assert proc.poll() is None, proc.communicate()[1][-3000:]
            time.sleep(0.1)
        if when == "mid-collective":  # after rank 0's first result: the next collectives run
            wait_for_a_result(rank0, proc)
        subprocess.run(["docker", fault, victim[0]], check=True, capture_output=True)
        out, err = proc.communicate(timeout=240)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode in (0, 3), err[-3000:]
    (run,) = json.loads(out)
    assert len(run["results"]) == 7
    lost = [r for r in run["results"] if r["status"] != "pass"]
    for r in lost:
        assert r["status"] == status and f"node {victim[1]} (rank 1) {what}" in r["message"], r
    if when == "rendezvous":
        assert len(lost) == 7
    else:  # what both ranks finished before the fault stands; the rest is lost, naming the node
        assert 1 <= 7 - len(lost) < 7, run["results"]
    assert our_containers(run["run"]) == []
    assert not any("valorch-" in line for line in queue())  # no Slurm job left
