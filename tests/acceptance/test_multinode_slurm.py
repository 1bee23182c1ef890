"""A 2-node gloo task on the real two-node Slurm test cluster (scripts/start-slurm.sh: both
slurmd instances, real sbatch and srun), through the real CLI: one job with --nodes=2
--ntasks-per-node=1, srun starting the container on each node, the rendezvous from
SLURM_JOB_NODELIST; exact values and busbw stored. Then one node's container is killed on
purpose, or frozen (docker pause), while it waits at a point it cannot pass (tests/rank_hold.py:
the steps' containers run on a private engine, DOCKER_HOST, whose runtime holds rank 1 at the
rendezvous or after the first check): the task ends, naming that node, with no container and
no Slurm job left."""

import json
import os
import shutil
import sqlite3
import subprocess
from pathlib import Path

import dockerd
import pytest
import rank_hold
from conftest import ROOT, VALORCH

pytestmark = [pytest.mark.slurm, pytest.mark.docker]

START = ROOT / "scripts" / "start-slurm.sh"
ALIAS = "cpu_debian12_py3.11_pytorch_1.13"
IMAGE = "valorch/test:debian-torch"
DIR = Path("/tmp/valorch-slurm-engine")
HOLD = Path("/tmp/valorch-slurm-hold")  # mounted into rank 1's container
BRIDGE = "vlch-sl-br0"


@pytest.fixture(scope="module")
def slurm():
    if os.geteuid() != 0:
        pytest.skip(
            "the Slurm test cluster needs root (scripts/start-slurm.sh installs and starts daemons)"
        )
    done = subprocess.run(["bash", str(START)], capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]


@pytest.fixture(scope="module")
def held_engine(slurm):
    """A private engine whose containers can be held (tests/rank_hold.py); the steps reach it
    through DOCKER_HOST, which sbatch --export=ALL passes on."""
    if not shutil.which("dockerd"):
        pytest.skip("dockerd is needed for a second engine")
    dockerd.stop_stale(DIR)
    rank_hold.arm(HOLD, 0)
    with dockerd.running(DIR, BRIDGE, *rank_hold.runtime(HOLD, DIR), images=(IMAGE,)) as sock:
        yield f"unix://{sock}"


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


def our_containers(run_id=None, engine=None):
    label = f"org.valorch.run={run_id}" if run_id else "org.valorch.run"
    host = ["-H", engine] if engine else []
    return subprocess.run(
        ["docker", *host, "ps", "-aq", "--filter", f"label={label}"],
        capture_output=True,
        text=True,
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
    held_engine, tmp_path, fault, status, what, when
):
    db = tmp_path / "v.sqlite"
    env = {k: v for k, v in os.environ.items() if k != "VALORCH_DB"}
    env["DOCKER_HOST"] = held_engine
    rank_hold.arm(HOLD, 1 if when == "rendezvous" else 2)
    proc = subprocess.Popen(
        run_args(tmp_path, db, deadline=20),
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    victim = None
    try:
        # rank 1 waits at the rendezvous, or at its second check once the first passed on
        # both ranks, until the fault
        rank_hold.wait_until_held(HOLD, proc)
        docker = ["docker", "-H", held_engine]
        running = [*docker, "ps", "-q", "--filter", "label=org.valorch.run"]
        for cid in subprocess.run(
            [*running, "--filter", "status=running"], capture_output=True, text=True
        ).stdout.split():
            envs = json.loads(
                subprocess.run(
                    [*docker, "inspect", "--format", "{{json .Config.Env}}", cid],
                    capture_output=True,
                    text=True,
                ).stdout
            )
            if "RANK=1" in envs:
                node = next(e for e in envs if e.startswith("VALORCH_NODE="))
                victim = (cid, node.split("=", 1)[1])
        assert victim, "rank 1 is held, but no running container has RANK=1"
        subprocess.run([*docker, fault, victim[0]], check=True, capture_output=True)
        out, err = proc.communicate(timeout=240)
    finally:
        rank_hold.release(HOLD)
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
    else:  # the first check, which both ranks finished before the fault, stands; the rest
        # is lost, naming the node
        assert 7 - len(lost) == 1, run["results"]
    assert our_containers(run["run"], held_engine) == []
    assert not any("valorch-" in line for line in queue())  # no Slurm job left
