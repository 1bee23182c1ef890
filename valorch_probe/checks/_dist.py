"""Multi-process distributed checks: N real processes (one per rank) meeting over
loopback, so that something is actually communicated. Gloo and TensorPipe run
with 2 CPU processes; NCCL/RCCL with one rank per GPU (and skip below 2 GPUs)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from typing import Any, Dict, List, Optional, Tuple

from ..context import Fail, Skip
from ._common import available as available  # the checks' _dist.available
from ._common import free_port

RANKS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_ranks.py")
RANK_TIMEOUT_S = 180.0


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
    with its output, except one that died for want of an optional module torch does not
    require (numpy): that is a skip naming it. Once a rank has died its peers are stopped
    within PEER_GRACE_S, so a dead rank never reads as a hang."""
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
    outs = _collect(procs, world_size)
    # a rank that died by itself speaks before the peers that were stopped for it
    for rank in sorted(range(world_size), key=lambda r: outs[r][0] < 0):
        rc, text = outs[rank]
        line = [ln for ln in text.splitlines() if ln.startswith("RANK_RESULT ")]
        if line and rc == -signal.SIGKILL:
            continue  # answered, then lingered in shutdown (gloo's teardown) and was stopped
        if rc != 0 or not line:
            tail = text[-1500:]
            missing = missing_module(text)
            if missing:
                raise Skip(
                    "not measurable in this image: no %s, an optional module that torch does not "
                    "require but this path calls (rank %d: %s); install %s to measure it"
                    % (missing, rank, _last_line(text), missing),
                    {"world_size": world_size, "missing_module": missing},
                    log=tail,
                )
            raise Fail(
                "rank %d of %d exited %d without an answer: %s"
                % (rank, world_size, rc, tail.strip().splitlines()[-1:] or ""),
                {"world_size": world_size},
                log=tail,
            )
    return [
        json.loads([ln for ln in t.splitlines() if ln.startswith("RANK_RESULT ")][-1][12:])
        for _, t in outs
    ]


# torch's own words when an optional module is absent: "Numpy is not available"
# (torch/csrc/utils/tensor_numpy.cpp, raised by tensor.numpy(): e.g. all_gather_object's
# _tensor_to_object, which init_rpc uses to exchange device maps), or Python's import error
_MISSING_MODULE = re.compile(
    r"(?P<numpy>Numpy is not available)|No module named '(?P<name>[A-Za-z0-9_.]+)'"
)
PEER_GRACE_S = 5.0  # once a rank has died, how long its peers get to finish on their own


def missing_module(text: str) -> Optional[str]:
    m = _MISSING_MODULE.search(text or "")
    if not m:
        return None
    if m.group("numpy"):
        return "numpy"
    top = m.group("name").split(".")[0]
    return None if top == "torch" else top  # torch's own parts missing: a broken install


def _last_line(text: str) -> str:
    lines = [ln for ln in (text or "").strip().splitlines() if ln.strip()]
    return lines[-1][:300] if lines else ""


def _collect(procs: List[Any], world_size: int) -> List[Tuple[int, str]]:
    """Wait for every rank at once: a rank that dies stops its peers within PEER_GRACE_S
    (a peer waiting in a collective for the dead one would otherwise hang to the timeout), and
    once every rank has answered, one still shutting down is stopped after PEER_GRACE_S
    (seen with torch 2.6's gloo: rank 0 answers, then never returns from its teardown)."""
    outputs = [[] for _ in procs]  # type: List[List[bytes]]
    readers = [
        threading.Thread(target=_drain, args=(p, outputs[i]), daemon=True)
        for i, p in enumerate(procs)
    ]
    for t in readers:
        t.start()
    deadline = time.monotonic() + RANK_TIMEOUT_S
    died_at = None  # type: Optional[float]
    try:
        while any(p.poll() is None for p in procs):
            now = time.monotonic()
            answered = all(b"RANK_RESULT " in b"".join(o) for o in outputs)
            if died_at is None and (answered or any(p.poll() not in (None, 0) for p in procs)):
                died_at = now  # or every rank has answered and one lingers in its shutdown
            if died_at is not None and now - died_at > PEER_GRACE_S:
                break  # the peers of a dead rank: stopped below, the dead rank's words decide
            if now > deadline:
                raise Fail(
                    "rank %d of %d passed %ss (a peer never joined or a collective hung)"
                    % ([p.poll() for p in procs].index(None), world_size, RANK_TIMEOUT_S)
                )
            time.sleep(0.05)
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
            p.wait()
        for t in readers:
            t.join(5.0)
        for p in procs:
            p.stdout.close()  # drained by its reader: the pipe is ours to close
    return [(p.returncode, b"".join(o).decode("utf-8", "replace")) for p, o in zip(procs, outputs)]


def _drain(proc: Any, sink: List[bytes]) -> None:
    try:
        for chunk in iter(lambda: os.read(proc.stdout.fileno(), 65536), b""):
            sink.append(chunk)
    except (OSError, ValueError):
        pass  # the pipe was closed under a reader still held by a rank's own child


def verify(answers: List[Dict[str, Any]], keys: List[str], what: str) -> None:
    wrong = ["rank %d %s" % (r, k) for r, a in enumerate(answers) for k in keys if not a.get(k)]
    if wrong:
        raise Fail(
            "%s: wrong result on %s" % (what, ", ".join(wrong)), {"world_size": len(answers)}
        )
