"""multinode: collectives across nodes. The orchestrator starts one probe per node (one
rank each) with the standard rendezvous variables (MASTER_ADDR, MASTER_PORT, WORLD_SIZE,
RANK, LOCAL_RANK, NODE_RANK) and VALORCH_NODE / VALORCH_IMAGE_DIGEST; every rank runs the
same checks in the same order, and each check gathers every rank's own answer, so that
rank 0's result names the node that differs. Gloo on CPU, NCCL (RCCL on ROCm) on GPUs.

Bus bandwidth follows nccl-tests (doc/PERFORMANCE.md): algbw = S / t, with S the
message size in bytes (for all_gather the whole output buffer, gathered with the tensor API
all_gather_into_tensor) and t the time of one call, measured over back-to-back calls
(VALORCH_BUSBW_ITERS, 20) and averaged over the ranks; busbw = algbw * 2(n-1)/n for all_reduce, (n-1)/n for all_gather and
reduce_scatter, 1 for broadcast, n being the number of ranks.
"""

from __future__ import annotations

import datetime
import functools
import json
import os
import tempfile
import time
from typing import Any, Dict, List, Tuple

from .. import nccl_log, read_text
from ..context import Fail, Report, Skip
from ..registry import check, checks_of, suite
from . import _dist

node_check = checks_of("kernel", "multinode", library="Gloo/NCCL/RCCL", version=1, nodes=2)

suite(
    "multinode",
    "torch",
    "Collectives across nodes (one probe per node): exact all_reduce / all_gather / broadcast, "
    "nccl-tests bus bandwidth, one image, framework and driver on every node.",
)

ENV = ("MASTER_ADDR", "MASTER_PORT", "WORLD_SIZE", "RANK")
_GROUP = {}  # type: Dict[str, Any]  # this worker's process group, made once

#: bus bandwidth factor per collective (nccl-tests doc/PERFORMANCE.md), n = ranks
BUSBW = {
    "all_reduce": lambda n: 2.0 * (n - 1) / n,
    "all_gather": lambda n: (n - 1) / float(n),
    "reduce_scatter": lambda n: (n - 1) / float(n),
    "broadcast": lambda n: 1.0,
}
CPU_SIZES = (1 << 10, 1 << 14, 1 << 18, 1 << 22)  # bytes: 1 KiB .. 4 MiB over gloo
GPU_SIZES = (1 << 20, 1 << 23, 1 << 26, 1 << 28)  # bytes: 1 MiB .. 256 MiB over NCCL/RCCL


def busbw(collective: str, size_bytes: float, seconds: float, ranks: int) -> Tuple[float, float]:
    """(algbw, busbw) in GB/s (1e9 bytes) for one timed collective, as nccl-tests computes them."""
    algbw = size_bytes / seconds / 1e9
    return algbw, algbw * BUSBW[collective](ranks)


def rendezvous() -> Dict[str, Any]:
    """The rendezvous variables, or Skip when this probe was not launched as one rank of many."""
    missing = [k for k in ENV if not os.environ.get(k)]
    if missing:
        raise Skip(
            "not launched as a multi-node task (no %s): declare `nodes: N` on the suite"
            % ", ".join(missing)
        )
    env = os.environ
    return {
        "addr": env["MASTER_ADDR"],
        "port": int(env["MASTER_PORT"]),
        "world": int(env["WORLD_SIZE"]),
        "rank": int(env["RANK"]),
        "local_rank": int(env.get("LOCAL_RANK", "0")),
        "node_rank": int(env.get("NODE_RANK", env["RANK"])),
        "node": env.get("VALORCH_NODE") or env.get("SLURMD_NODENAME") or os.uname()[1],
        "timeout": float(env.get("VALORCH_COLLECTIVE_TIMEOUT", "60")),
    }


def group(ctx: Any) -> Tuple[Any, Dict[str, Any]]:
    """(torch.distributed, the rendezvous) with this worker's process group joined (once)."""
    if _GROUP.get("failed"):  # one wait for the peers per worker, not one per check
        raise Fail("the process group could not be formed: %s" % _GROUP["failed"])
    if _GROUP:
        return _GROUP["dist"], _GROUP["rv"]
    rv = rendezvous()
    # A rank joins once: a worker that starts after another one of this probe joined (or died
    # trying: killed at its deadline, crashed mid-collective) cannot rejoin its peers.
    marker = os.path.join(
        tempfile.gettempdir(), "valorch-multinode-%d-%d" % (rv["port"], rv["rank"])
    )
    if os.path.exists(marker):
        _GROUP["failed"] = (
            "an earlier worker of this rank already joined the group and ended (%s)"
            % (read_text(marker, 200) or "?")
        )
        raise Fail("the process group is gone: %s" % _GROUP["failed"])
    with open(marker, "w") as fh:
        fh.write("joining at %s:%d" % (rv["addr"], rv["port"]))
    torch = ctx.torch
    gpu = ctx.device == "cuda"
    backend = "nccl" if gpu else "gloo"
    dist = _dist.available(torch, backend)
    if gpu:
        torch.cuda.set_device(rv["local_rank"] % max(1, torch.cuda.device_count()))
        rv["nccl_log"] = nccl_log.enable()  # the transport NCCL/RCCL picks, named beside busbw
    try:
        dist.init_process_group(
            backend,
            init_method="tcp://%s:%d" % (rv["addr"], rv["port"]),
            rank=rv["rank"],
            world_size=rv["world"],
            timeout=datetime.timedelta(seconds=rv["timeout"]),
        )
    # a peer that never came (dead, frozen, unreachable) within the timeout
    except Exception as exc:
        _GROUP["failed"] = "rank %d of %d at %s:%d: %s: %s" % (
            rv["rank"],
            rv["world"],
            rv["addr"],
            rv["port"],
            type(exc).__name__,
            str(exc)[:300],
        )
        raise Fail("the process group could not be formed: %s" % _GROUP["failed"]) from exc
    rv["backend"], rv["device"] = backend, ("cuda" if gpu else "cpu")
    _GROUP.update(dist=dist, rv=rv)
    return dist, rv


def _tensor(torch: Any, rank: int, n: int, device: str) -> Any:
    # integer-valued float32: sums over ranks stay exact
    return ((torch.arange(n, dtype=torch.float32) % 97 + 1) * (rank + 1)).to(device)


def agree(dist: Any, rv: Dict[str, Any], mine: Dict[str, Any]) -> List[Dict[str, Any]]:
    out = [None] * rv["world"]  # type: List[Any]
    dist.all_gather_object(out, dict(mine, node=rv["node"], rank=rv["rank"]))
    return out


def _verdict(
    ctx: Any, rv: Dict[str, Any], answers: List[Dict[str, Any]], what: str, detail: str
) -> Report:
    wrong = [
        "%s (rank %d): %s" % (a["node"], a["rank"], a.get("why", "wrong values"))
        for a in answers
        if not a["ok"]
    ]
    metrics = {
        "world_size": rv["world"],
        "nodes": len({a["node"] for a in answers}),
        "backend": rv["backend"],
        "rank": rv["rank"],
        "node": rv["node"],
    }
    if wrong:
        raise Fail(
            "%s across %d ranks: wrong on %s" % (what, rv["world"], "; ".join(wrong)), metrics
        )
    ctx.claim(
        library=_library(ctx, rv),
        source="torch.distributed %s, %d ranks on nodes %s"
        % (rv["backend"], rv["world"], ", ".join(a["node"] for a in answers)),
    )
    return Report(
        "%s across %d ranks on %d nodes (%s): %s"
        % (what, rv["world"], metrics["nodes"], rv["backend"], detail),
        metrics,
    )


def _library(ctx: Any, rv: Dict[str, Any]) -> str:
    if rv["backend"] == "gloo":
        return "Gloo"
    return "RCCL" if ctx.vendor == "amd" else "NCCL"


N = 1 << 16  # elements of the exactness checks


@node_check("multinode.all_reduce", "all_reduce across nodes")
def all_reduce(ctx):
    """Every rank all_reduces (sum) 65536 integer-valued floats scaled by rank+1: each rank must hold
    exactly the sum over all ranks; the ranks' verdicts are gathered, so a wrong node is named.

    Not proven: other dtypes or reduction ops, message sizes beyond 256 KiB (see multinode.busbw.*)."""
    dist, rv = group(ctx)
    torch = ctx.torch
    t = _tensor(torch, rv["rank"], N, rv["device"])
    dist.all_reduce(t)
    want = _tensor(torch, 0, N, "cpu") * (rv["world"] * (rv["world"] + 1) // 2)
    ok = bool(torch.equal(t.cpu(), want))
    return _verdict(
        ctx, rv, agree(dist, rv, {"ok": ok}), "all_reduce of %d floats" % N, "exact on every rank"
    )


@node_check("multinode.all_gather", "all_gather across nodes")
def all_gather(ctx):
    """Every rank all_gathers its own rank-scaled tensor: slot r of every rank's output must be exactly rank r's
    tensor.

    Not proven: uneven sizes (all_gather_into_tensor), other dtypes."""
    dist, rv = group(ctx)
    torch = ctx.torch
    mine = _tensor(torch, rv["rank"], N, rv["device"])
    out = [torch.empty_like(mine) for _ in range(rv["world"])]
    dist.all_gather(out, mine)
    bad = [r for r, o in enumerate(out) if not torch.equal(o.cpu(), _tensor(torch, r, N, "cpu"))]
    answer = {"ok": not bad, "why": "slots of ranks %s differ" % bad}
    return _verdict(
        ctx, rv, agree(dist, rv, answer), "all_gather of %d floats" % N, "every slot exact"
    )


@node_check("multinode.broadcast", "broadcast across nodes")
def broadcast(ctx):
    """A broadcast from rank 0 and one from the last rank (so that both directions between nodes carry
    data): every rank must hold exactly the root's tensor.

    Not proven: every rank as a root, other dtypes."""
    dist, rv = group(ctx)
    torch = ctx.torch
    ok, why = True, ""
    for root in sorted({0, rv["world"] - 1}):
        b = _tensor(torch, rv["rank"], N, rv["device"])
        dist.broadcast(b, root)
        if not torch.equal(b.cpu(), _tensor(torch, root, N, "cpu")):
            ok, why = False, "broadcast from rank %d differs" % root
    return _verdict(
        ctx,
        rv,
        agree(dist, rv, {"ok": ok, "why": why}),
        "broadcast of %d floats" % N,
        "exact on every rank, from rank 0 and rank %d" % (rv["world"] - 1),
    )


def _timed(
    ctx: Any, dist: Any, rv: Dict[str, Any], collective: str, size: int, warmup: int, reps: int
) -> List[float]:
    """Seconds per collective, one value per repetition, as nccl-tests measures them: each
    repetition times ``iters`` back-to-back calls (no barrier between them) and divides by
    ``iters``, and the ranks' times are averaged (nccl-tests' default ``-a 1``)."""
    torch = ctx.torch
    n = max(1, size // 4)
    dev, world = rv["device"], rv["world"]
    iters = max(1, int(os.environ.get("VALORCH_BUSBW_ITERS", "20")))
    if collective == "all_gather":
        per = max(1, n // world)
        src = torch.ones(per, dtype=torch.float32, device=dev)
        gather = getattr(dist, "all_gather_into_tensor", None)
        op = None  # type: Any
        if gather is not None:  # the tensor API nccl-tests' ncclAllGather matches
            out_t = torch.empty(per * world, dtype=torch.float32, device=dev)
            op = functools.partial(gather, out_t, src)
            try:
                op()  # Gloo of some releases has no _allgather_base: every rank says so at once
                rv["gather_api"] = "all_gather_into_tensor"
            except RuntimeError as exc:
                if "no support" not in str(exc):
                    raise
                op = None
        if op is None:  # torch before 2.0, or a backend without the tensor API: the list API
            out = [torch.empty_like(src) for _ in range(world)]
            op = functools.partial(dist.all_gather, out, src)
            rv["gather_api"] = "all_gather (list)"
    else:
        buf = torch.ones(n, dtype=torch.float32, device=dev)
        op = functools.partial(dist.broadcast, buf, 0)
        op = op if collective == "broadcast" else functools.partial(dist.all_reduce, buf)
    for _ in range(warmup):
        op()
    times = []
    for _ in range(reps):
        dist.barrier()
        ctx.synchronize()
        t0 = time.perf_counter()
        for _ in range(iters):
            op()
        ctx.synchronize()
        times.append((time.perf_counter() - t0) / iters)
    mean = torch.tensor(
        times, dtype=torch.float64, device=dev if rv["backend"] == "nccl" else "cpu"
    )
    dist.all_reduce(mean)  # summed over the ranks, then averaged
    return [float(x) / world for x in mean.cpu().tolist()]


def _busbw_check(ctx: Any, collective: str) -> Report:
    dist, rv = group(ctx)
    sizes = _sizes(rv)
    reps = int(os.environ.get("VALORCH_BUSBW_REPS", "5"))
    metrics = {
        "world_size": rv["world"],
        "ranks": rv["world"],  # n of busbw's factor: ranks (GPUs), not nodes
        "iters": max(1, int(os.environ.get("VALORCH_BUSBW_ITERS", "20"))),
        "backend": rv["backend"],
        "node": rv["node"],
        "rank": rv["rank"],
        "sizes": ",".join(str(s) for s in sizes),
        "busbw_factor": BUSBW[collective](rv["world"]),
    }
    samples = []  # type: List[float]
    for size in sizes:
        times = _timed(ctx, dist, rv, collective, size, warmup=2, reps=reps)
        bus = [busbw(collective, size, t, rv["world"])[1] for t in times]
        mid = sorted(times)[len(times) // 2]
        algbw, bw = busbw(collective, size, mid, rv["world"])
        metrics["time_us@%d" % size] = round(mid * 1e6, 3)
        metrics["algbw_GBps@%d" % size] = round(algbw, 6)
        metrics["busbw_GBps@%d" % size] = round(bw, 6)
        samples = bus  # the samples are the largest size's, one per repetition
    ctx.claim(
        library=_library(ctx, rv),
        source="torch.distributed %s, %d ranks" % (rv["backend"], rv["world"]),
    )
    metrics["transport"] = _transport(rv)
    if collective == "all_gather":
        metrics["api"] = rv.get("gather_api")  # the tensor API where the backend has it
    top = sizes[-1]
    return Report(
        "%s busbw %.4f GB/s at %d bytes across %d ranks over %s (%s; sizes %s bytes)"
        % (
            collective,
            metrics["busbw_GBps@%d" % top],
            top,
            rv["world"],
            metrics["transport"],
            rv["backend"],
            metrics["sizes"],
        ),
        metrics,
        samples=samples,
        unit="GB/s",
    )


def _transport(rv: Dict[str, Any]) -> str:
    """What the figure was measured over: gloo's TCP sockets, or the transports NCCL/RCCL logged
    (NCCL_DEBUG=INFO: NET/Socket, NET/IB, P2P, SHM, NVLS)."""
    if rv["backend"] == "gloo":
        return "TCP sockets (gloo)"
    names = nccl_log.transports(read_text(rv.get("nccl_log", ""), 4_000_000))
    return nccl_log.describe(names) or "not logged (NCCL_DEBUG set by the user, or no connection)"


def _sizes(rv: Dict[str, Any]) -> Tuple[int, ...]:
    given = os.environ.get("VALORCH_BUSBW_SIZES", "")
    if given:
        return (
            tuple(sorted(int(s) for s in given.split(",") if s.strip().isdigit() and int(s) > 0))
            or CPU_SIZES
        )
    return GPU_SIZES if rv["backend"] == "nccl" else CPU_SIZES


# (collective, the figure's doc paragraphs): one declaration each, the same measurement
_BUSBW = (
    (
        "all_reduce",
        "all_reduce timed for a range of message sizes as nccl-tests times it (back-to-back calls per "
        "repetition, the time per call averaged over the ranks); busbw = S/t * 2(n-1)/n with n the ranks; "
        "the samples are the largest size's, each size's median in the metrics.\n\nNot proven: sizes "
        "outside the range, in-place vs out-of-place differences, other dtypes.",
    ),
    (
        "all_gather",
        "all_gather_into_tensor timed for a range of output sizes S, back-to-back calls averaged over the "
        "ranks; busbw = S/t * (n-1)/n with n the ranks (nccl-tests).\n\nNot proven: sizes outside the "
        "range, the list API (all_gather), uneven sizes.",
    ),
    (
        "broadcast",
        "broadcast from rank 0 timed for a range of message sizes, back-to-back calls averaged over the "
        "ranks; busbw = algbw = S/t (nccl-tests).\n\nNot proven: other roots, sizes outside the range.",
    ),
)


for _op, _doc in _BUSBW:
    _fn = functools.partial(_busbw_check, collective=_op)
    _fn.__doc__ = _doc
    node_check(
        "multinode.busbw." + _op,
        _op + " bus bandwidth across nodes",
        version=2,
        unit="GB/s",
        bigger_is_better=True,
    )(_fn)


def driver() -> str:
    """The GPU kernel driver's version on this node ('none' without one)."""
    for word in read_text("/proc/driver/nvidia/version").split("\n", 1)[0].split():
        if word[:1].isdigit() and "." in word:
            return "nvidia " + word
    amdgpu = read_text("/sys/module/amdgpu/version").strip()
    return "amdgpu " + amdgpu if amdgpu else "none"


FACTS = ("image_id", "framework", "driver")


@check(
    "multinode.consistency",
    "same image, framework and driver on every node",
    "environment",
    "multinode",
    version=2,
    nodes=2,
)
def consistency(ctx):
    """Every rank reports the image it runs, torch's version and the node's GPU driver; all
    must equal rank 0's. A node that differs is named with its values. The image is compared
    by its id (the content digest of its config, VALORCH_IMAGE_ID), the same on an engine
    that pulled it and one that loaded it; its digest (VALORCH_IMAGE_DIGEST: the manifest
    digest on the first, the id on the second) is reported, and compared only when some
    node's engine gave no id.

    Not proven: identical firmware, kernel, NIC or library builds beyond these three facts."""
    dist, rv = group(ctx)
    mine = {
        "image_digest": os.environ.get("VALORCH_IMAGE_DIGEST") or "unknown",
        "image_id": os.environ.get("VALORCH_IMAGE_ID") or "",
        "framework": str(getattr(ctx.torch, "__version__", "")),
        "driver": driver(),
        "ok": True,
    }
    answers = agree(dist, rv, mine)
    first = answers[0]
    facts = FACTS if all(a.get("image_id") for a in answers) else ("image_digest", *FACTS[1:])
    differ = []
    for a in answers[1:]:
        diff = [
            "%s %s (%s has %s)" % (k, a.get(k), first["node"], first.get(k))
            for k in facts
            if a.get(k) != first.get(k)
        ]
        if diff:
            differ.append("node %s: %s" % (a["node"], ", ".join(diff)))
    metrics = {
        "world_size": rv["world"],
        "node_facts": json.dumps(
            [{k: a.get(k) for k in ("node", "rank", "image_digest", *FACTS)} for a in answers],
            sort_keys=True,
        ),
    }
    if differ:
        raise Fail("nodes differ from %s: %s" % (first["node"], "; ".join(differ)), metrics)
    return Report(
        "%d nodes run image %s, torch %s, driver %s"
        % (len(answers), first["image_digest"][:19], first["framework"], first["driver"]),
        metrics,
    )
