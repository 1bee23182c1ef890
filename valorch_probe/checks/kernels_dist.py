"""kernels: the collectives under torch.distributed, with real ranks (one process
each) meeting over 127.0.0.1: gloo with 2 CPU processes, NCCL/RCCL with one
process per GPU (skip below 2 GPUs). all_reduce is timed on rank 0."""

from __future__ import annotations

from ..context import Fail, Report
from ..registry import checks_of
from . import _dist

dist_check = checks_of("kernel", "kernels", unit="s", version=2)


def _all_reduce(ctx, backend, world, device):
    torch = ctx.torch
    _dist.available(torch, backend)
    answers = _dist.run_ranks(
        "collectives", world, backend=backend, device=device, n=1 << 16, warmup=3, reps=20
    )
    _dist.verify(answers, ["all_reduce", "broadcast", "all_gather"], "%s collectives" % backend)
    sizes = sorted({a["world_size"] for a in answers})
    if sizes != [world]:
        raise Fail("ranks report world sizes %s, expected %d" % (sizes, world))
    samples = answers[0]["samples"]
    ctx.claim(
        library=("NCCL" if ctx.vendor == "nvidia" else "RCCL") if backend == "nccl" else "Gloo",
        source="torch.distributed backend %s, %d processes over 127.0.0.1"
        % (answers[0]["backend"], world),
    )
    return Report(
        "%s all_reduce of 65536 floats across %d processes: exact on every rank"
        % (answers[0]["backend"], world),
        {
            "rel_error": 0.0,
            "backend": answers[0]["backend"],
            "world_size": world,
            "processes": world,
            "reps": len(samples),
        },
        samples=samples,
        unit="s",
    )


@dist_check("kernels.all_reduce.gloo", "all_reduce (Gloo)", library="Gloo")
def all_reduce_gloo(ctx):
    """Two processes form a gloo group over 127.0.0.1 and all_reduce / broadcast / all_gather CPU tensors: every
    rank gets the exact sum of both ranks' tensors; all_reduce is timed on rank 0.

    Not proven: more than 2 ranks, other hosts or network interfaces, GPU tensors over gloo."""
    return _all_reduce(ctx, "gloo", 2, "cpu")


@dist_check("kernels.all_reduce.nccl", "all_reduce (NCCL)", library="RCCL/NCCL", needs=("gpu",))
def all_reduce_nccl(ctx):
    """One process per GPU forms an nccl (RCCL on ROCm) group and all_reduce / broadcast / all_gather device
    tensors exactly; skip with fewer than 2 GPUs.

    Not proven: multi-node runs, other collectives, large messages or bandwidth."""
    world = _dist.gpu_world(ctx)
    return _all_reduce(ctx, "nccl", world, "cuda")
