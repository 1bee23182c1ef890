"""Multi-process distributed checks: N real processes (one per rank) meeting over
loopback, so that something is actually communicated. Gloo and TensorPipe run
with 2 CPU processes; NCCL/RCCL with one rank per GPU (and skip below 2 GPUs)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from typing import Any, Dict, List, Optional

from ..context import Fail, Skip, Unsupported
from ._common import free_port

RANKS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_ranks.py")
RANK_TIMEOUT_S = 180.0


def available(torch: Any, backend: Optional[str]) -> Any:
    """torch.distributed with this backend, or Unsupported naming what is missing."""
    dist = getattr(torch, "distributed", None)
    if dist is None or not dist.is_available():
        raise Unsupported("torch.distributed is not available in this build")
    probe = {"gloo": "is_gloo_available", "nccl": "is_nccl_available"}.get(backend or "")
    if probe and hasattr(dist, probe) and not getattr(dist, probe)():
        raise Unsupported(
            "torch.distributed.%s() is False: no %s backend in this build" % (probe, backend)
        )
    return dist


def gpu_world(ctx: Any) -> int:
    """One rank per visible GPU; fewer than 2 cannot communicate."""
    ctx.require_gpu()
    n = int(ctx.torch.cuda.device_count())
    if n < 2:
        raise Skip("needs 2 GPUs for one rank per GPU; this host shows %d" % n, {"gpus": n})
    return n


def run_ranks(task: str, world_size: int, **cfg: Any) -> List[Dict[str, Any]]:
    """Start ``world_size`` rank processes of _ranks.py and return each rank's
    answer (rank order). A rank that dies, hangs or answers nothing fails the check
    with its output."""
    port = free_port()
    env = dict(
        os.environ,
        MASTER_ADDR="127.0.0.1",
        MASTER_PORT=str(port),
        GLOO_SOCKET_IFNAME="lo",
        TP_SOCKET_IFNAME="lo",
        NCCL_SOCKET_IFNAME="lo",
        PYTHONUNBUFFERED="1",
    )
    procs = []
    for rank in range(world_size):
        conf = dict(cfg, task=task, rank=rank, world_size=world_size, port=port)
        procs.append(
            subprocess.Popen(
                [sys.executable, RANKS, json.dumps(conf)],
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                env=env,
            )
        )
    deadline = time.monotonic() + RANK_TIMEOUT_S
    outs = []
    try:
        for p in procs:
            left = max(1.0, deadline - time.monotonic())
            try:
                out, _ = p.communicate(timeout=left)
            except subprocess.TimeoutExpired as exc:
                raise Fail(
                    "rank %d of %d passed %ss (a peer never joined or a collective hung)"
                    % (procs.index(p), world_size, RANK_TIMEOUT_S)
                ) from exc
            outs.append((p.returncode, out.decode("utf-8", "replace")))
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    answers = []
    for rank, (rc, text) in enumerate(outs):
        line = [ln for ln in text.splitlines() if ln.startswith("RANK_RESULT ")]
        if rc != 0 or not line:
            tail = text[-1500:]
            raise Fail(
                "rank %d of %d exited %d without an answer: %s"
                % (rank, world_size, rc, tail.strip().splitlines()[-1:] or ""),
                {"world_size": world_size},
                log=tail,
            )
        answers.append(json.loads(line[-1][len("RANK_RESULT ") :]))
    return answers


def verify(answers: List[Dict[str, Any]], keys: List[str], what: str) -> None:
    wrong = ["rank %d %s" % (r, k) for r, a in enumerate(answers) for k in keys if not a.get(k)]
    if wrong:
        raise Fail(
            "%s: wrong result on %s" % (what, ", ".join(wrong)), {"world_size": len(answers)}
        )
