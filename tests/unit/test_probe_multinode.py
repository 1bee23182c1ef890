"""The multinode suite's checks with two real rank processes of the probe (the venv's torch,
gloo over 127.0.0.1), as the executors start them: every rank gets the rendezvous
variables. A node that runs another image digest is named by the consistency check."""

import json
import os
import socket
import subprocess
import sys

import pytest

# the ranks are probe processes of this interpreter that import its torch
pytestmark = pytest.mark.torch

from valorch_probe import MARKER


def _port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def ranks(probe_dir, digests, checks, ids=None):
    port = _port()
    procs = []
    for rank, digest in enumerate(digests):
        env = dict(
            os.environ,
            MASTER_ADDR="127.0.0.1",
            MASTER_PORT=str(port),
            WORLD_SIZE=str(len(digests)),
            RANK=str(rank),
            LOCAL_RANK="0",
            NODE_RANK=str(rank),
            VALORCH_NODE=f"node{rank}",
            VALORCH_IMAGE_DIGEST=digest,
            VALORCH_IMAGE_ID=(ids or [""] * len(digests))[rank],
            VALORCH_COLLECTIVE_TIMEOUT="30",
            VALORCH_BUSBW_SIZES="4096,65536",
            VALORCH_BUSBW_REPS="3",
            PYTHONPATH=str(probe_dir),
        )
        argv = [
            sys.executable,
            "-m",
            "valorch_probe",
            "run",
            "--suite",
            "multinode",
            "--workload-user",
            "self",
            "--device",
            "cpu",
            "--deadline",
            "60",
        ] + [a for c in checks for a in ("--check", c)]
        procs.append(
            subprocess.Popen(
                argv,
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                cwd=str(probe_dir),
            )
        )
    out = []
    for p in procs:
        stdout, _ = p.communicate(timeout=240)
        out.append(
            {
                r["check"]: r
                for r in (
                    json.loads(line[len(MARKER) :])
                    for line in stdout.splitlines()
                    if line.startswith(MARKER)
                )
                if r.get("type") == "result"
            }
        )
    return out


def test_collectives_exact_busbw_and_one_digest(probe_dir):
    r0, r1 = ranks(
        probe_dir,
        ["sha256:aa", "sha256:aa"],
        ["multinode.all_reduce", "multinode.busbw.all_gather", "multinode.consistency"],
    )
    for got in (r0, r1):
        assert {c: r["status"] for c, r in got.items()} == {
            "multinode.all_reduce": "pass",
            "multinode.busbw.all_gather": "pass",
            "multinode.consistency": "pass",
        }
    bw = r0["multinode.busbw.all_gather"]
    assert len(bw["samples"]) == 3 and bw["unit"] == "GB/s" and bw["bigger_is_better"] is True
    assert bw["metrics"]["busbw_factor"] == 0.5 and bw["metrics"]["busbw_GBps@65536"] > 0
    # nccl-tests' way: back-to-back calls per sample, averaged over the ranks (n counts ranks)
    assert bw["metrics"]["iters"] == 20 and bw["metrics"]["ranks"] == 2
    assert (
        bw["metrics"]["transport"] == "TCP sockets (gloo)" and "over TCP sockets" in bw["message"]
    )
    # every rank reports the same rank-averaged times
    assert bw["samples"] == r1["multinode.busbw.all_gather"]["samples"]


def test_a_node_with_another_digest_is_named(probe_dir):
    r0, _ = ranks(probe_dir, ["sha256:aa", "sha256:bb"], ["multinode.consistency"])
    res = r0["multinode.consistency"]
    assert res["status"] == "fail"
    assert "node node1: image_digest sha256:bb (node0 has sha256:aa)" in res["message"]


def test_one_image_pulled_on_one_node_and_loaded_on_the_other_is_the_same_image(probe_dir):
    # an engine that pulled the image names it by its manifest digest, one that loaded
    # it (docker load) by its id; both engines give the same id
    r0, _ = ranks(
        probe_dir,
        ["sha256:manifest", "sha256:config"],
        ["multinode.consistency"],
        ids=["sha256:config", "sha256:config"],
    )
    res = r0["multinode.consistency"]
    assert res["status"] == "pass", res["message"]
    nodes = json.loads(res["metrics"]["node_facts"])
    assert [(n["image_digest"], n["image_id"]) for n in nodes] == [
        ("sha256:manifest", "sha256:config"),
        ("sha256:config", "sha256:config"),
    ]


def test_a_node_with_another_image_id_is_named_whatever_the_digests(probe_dir):
    r0, _ = ranks(
        probe_dir,
        ["sha256:aa", "sha256:aa"],
        ["multinode.consistency"],
        ids=["sha256:11", "sha256:22"],
    )
    res = r0["multinode.consistency"]
    assert res["status"] == "fail"
    assert "node node1: image_id sha256:22 (node0 has sha256:11)" in res["message"]


def test_without_rendezvous_variables_the_checks_skip(probe_dir):
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("MASTER_ADDR", "MASTER_PORT", "WORLD_SIZE", "RANK")
    }
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "valorch_probe",
            "run",
            "--suite",
            "multinode",
            "--workload-user",
            "self",
            "--device",
            "cpu",
            "--check",
            "multinode.broadcast",
        ],
        env=env,
        cwd=str(probe_dir),
        capture_output=True,
        text=True,
        timeout=240,
    )
    (res,) = [
        json.loads(line[len(MARKER) :])
        for line in done.stdout.splitlines()
        if line.startswith(MARKER) and '"type": "result"' in line
    ]
    assert res["status"] == "skip" and "declare `nodes: N`" in res["message"]
