"""features: the torch.cuda rows of the seed table (HIP devices answer to
torch.cuda on ROCm). The API is looked up first (missing -> unsupported), then
a GPU is required (none -> skip), then the feature is exercised and checked."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from typing import Any, Dict

from ..context import Fail, Partial, Report, Skip, Unsupported
from . import _dist
from ._common import attempt, randn
from .features import gpu_feature


@gpu_feature("features.cuda.device_management", "Device management")
def device_management(ctx):
    """torch.cuda enumerates the GPUs, reports their properties and switches the current device.

    Not proven: that every GPU computes correctly, peer access between GPUs, or device selection by environment
    variables."""
    torch = ctx.torch
    for attr in ("device_count", "get_device_properties", "set_device", "current_device"):
        ctx.require_attr(torch, "cuda." + attr)
    ctx.require_gpu()
    n = torch.cuda.device_count()
    names = []
    for i in range(n):
        torch.cuda.set_device(i)
        if torch.cuda.current_device() != i:
            raise Fail(
                "set_device(%d) left current_device at %d" % (i, torch.cuda.current_device())
            )
        p = torch.cuda.get_device_properties(i)
        if p.total_memory <= 0:
            raise Fail("device %d reports total_memory %s" % (i, p.total_memory))
        names.append(p.name)
    torch.cuda.set_device(0)
    return Report(
        "%d device(s): %s" % (n, ", ".join(sorted(set(names)))), {"device_count": n, "names": names}
    )


@gpu_feature("features.cuda.tensor_ops", "Tensor operations on GPU", library="hipBLAS/cuBLAS")
def tensor_ops(ctx):
    """Addition, a reduction and a matrix product computed on the GPU match float64 CPU results.

    Not proven: other operators or dtypes on the GPU (the kernels suite covers more)."""
    ctx.require_gpu()
    torch = ctx.torch
    a, b = randn(torch, 128, 128, seed=50), randn(torch, 128, 128, seed=51)
    da, db = a.cuda(), b.cuda()
    e1 = ctx.assert_close(da + db, a.double() + b.double(), 1e-6, "add")
    e2 = ctx.assert_close(
        (da * db).sum(dim=1), (a.double() * b.double()).sum(dim=1), 1e-5, "row sums"
    )
    e3 = ctx.assert_close(ctx.observe(lambda: da @ db), a.double() @ b.double(), 5e-3, "matmul")
    return Report("add %.1e, sum %.1e, matmul %.1e" % (e1, e2, e3), {"rel_error": max(e1, e2, e3)})


@gpu_feature("features.cuda.streams_events", "Streams and events")
def streams_events(ctx):
    """Work queued on a side stream is ordered by wait_stream, timed by a pair of events, and correct.

    Not proven: concurrency (overlap) of streams, stream priorities, or event timing accuracy."""
    torch = ctx.torch
    ctx.require_attr(torch, "cuda.Stream")
    ctx.require_attr(torch, "cuda.Event")
    ctx.require_gpu()
    a = randn(torch, 512, 512, seed=52)
    da = a.cuda()
    side = torch.cuda.Stream()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        start.record()
        c = da @ da
        end.record()
    torch.cuda.current_stream().wait_stream(side)
    c.record_stream(torch.cuda.current_stream())
    end.synchronize()
    if not end.query() or not side.query():
        raise Fail("event/stream not complete after synchronize")
    ms = start.elapsed_time(end)
    err = ctx.assert_close(c, a.double() @ a.double(), 5e-3, "matmul on a side stream")
    return Report(
        "side-stream matmul %.3f ms by events, rel err %.1e" % (ms, err),
        {"elapsed_ms": ms, "rel_error": err},
    )


@gpu_feature("features.cuda.memory_management", "Memory management")
def memory_management(ctx):
    """memory_allocated / max_memory_allocated / memory_reserved track a 64 MiB allocation and empty_cache releases it.

    Not proven: fragmentation behaviour, expandable segments or the allocator's speed."""
    torch = ctx.torch
    for attr in ("memory_allocated", "max_memory_allocated", "memory_reserved", "empty_cache"):
        ctx.require_attr(torch, "cuda." + attr)
    ctx.require_gpu()
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    before = torch.cuda.memory_allocated()
    size = 64 << 20
    t = torch.empty(size, dtype=torch.uint8, device="cuda")
    after = torch.cuda.memory_allocated()
    peak, reserved = torch.cuda.max_memory_allocated(), torch.cuda.memory_reserved()
    metrics = {"before": before, "after": after, "peak": peak, "reserved": reserved}
    if after - before < size:
        raise Fail(
            "memory_allocated grew by %d bytes for a %d-byte tensor" % (after - before, size),
            metrics,
        )
    if peak < after or reserved < after:
        raise Fail("max_memory_allocated/memory_reserved below memory_allocated", metrics)
    del t
    torch.cuda.empty_cache()
    metrics["reserved_after_empty_cache"] = torch.cuda.memory_reserved()
    if metrics["reserved_after_empty_cache"] > reserved - size:
        raise Fail("empty_cache did not release the freed 64 MiB block", metrics)
    return Report(
        "allocated +%d MiB, reserved %d MiB, released by empty_cache"
        % ((after - before) >> 20, reserved >> 20),
        metrics,
    )


def gpu_process_list(text):
    """Entries of torch.cuda.list_gpu_processes(): (pid, MB) per "process PID uses MB MB GPU memory" line."""
    return [
        (int(m.group(1)), float(m.group(2)))
        for m in re.finditer(r"process\s+(\d+)\s+uses\s+([0-9.]+)\s*MB", text or "")
    ]


# torch/cuda/memory.py list_gpu_processes: "pynvml module not found, please install pynvml"
# (on ROCm: "amdsmi module not found, please install amdsmi")
_MONITOR_ABSENT = re.compile(r"\b(pynvml|amdsmi) module not found")


@gpu_feature("features.cuda.memory_stats", "Running process lists of memory management", version=4)
def memory_stats(ctx):
    """torch.cuda.list_gpu_processes() lists the processes using the GPU (this one among them, holding at least
    the memory it allocated), memory_stats() counts the live allocation and memory_summary() renders the
    allocator table. A process list that cannot be read is partial, except where the image lacks the module
    torch reads it with (pynvml / amdsmi): the process list is the row, so that is skip "not measurable: no
    pynvml in this image", with the allocator's numbers beside it.

    Not proven: other processes' numbers (they come from the driver), nor the list inside a PID namespace
    that hides this process from the driver (then any listed process counts)."""
    torch = ctx.torch
    ctx.require_attr(torch, "cuda.memory_stats")
    ctx.require_attr(torch, "cuda.memory_summary")
    lister = ctx.require_attr(torch, "cuda.list_gpu_processes")
    ctx.require_gpu()
    t = torch.ones(64 << 18, device="cuda")  # 64 MiB
    torch.cuda.synchronize()
    stats = torch.cuda.memory_stats()
    cur = stats.get("allocated_bytes.all.current", 0)
    metrics = {"stats_keys": len(stats), "allocated_current": cur}
    if cur < t.numel() * 4:
        raise Fail(
            "memory_stats allocated_bytes.all.current=%s below a live 64 MiB tensor" % cur, metrics
        )
    summary = torch.cuda.memory_summary()
    if "Allocated memory" not in summary and "allocated" not in summary.lower():
        raise Fail("memory_summary() has no allocation table", metrics)
    try:
        text = str(lister())
    except Exception as exc:
        text = "%s: %s" % (type(exc).__name__, exc)
    procs = gpu_process_list(text)
    mine = [mb for pid, mb in procs if pid == os.getpid()]
    metrics.update(processes=len(procs), own_pid_listed=bool(mine), process_list=text[:500])
    said = text.strip().splitlines()[-1][:300] if text.strip() else "an empty answer"
    absent = _MONITOR_ABSENT.search(text)
    if not procs and absent:  # the image lacks the optional module: packaging, not the feature
        metrics["process_list"] = "not measurable in this image: no %s" % absent.group(1)
        raise Skip(
            "not measurable: no %s in this image, and the running process list (the row) is read "
            "with it (list_gpu_processes said: %s); memory_stats %d keys, %d MiB allocated, "
            "memory_summary renders" % (absent.group(1), said, len(stats), cur >> 20),
            metrics,
        )
    if not procs:
        raise Partial(
            "partial support: memory_stats and memory_summary work, but the running process list "
            "could not be read: %s" % said,
            metrics,
        )
    if mine and max(mine) < 60:
        raise Fail(
            "list_gpu_processes shows this process using %.0f MB while it holds a 64 MiB tensor"
            % max(mine),
            metrics,
        )
    return Report(
        "%d process(es) listed%s; memory_stats %d keys, %d MiB allocated"
        % (
            len(procs),
            " (this one with %.0f MB)" % max(mine)
            if mine
            else " (this process's PID is not visible to the driver here)",
            len(stats),
            cur >> 20,
        ),
        metrics,
    )


@gpu_feature(
    "features.cuda.collectives", "Communication collectives", library="RCCL/NCCL", version=2
)
def collectives(ctx):
    """One process per GPU forms an nccl (RCCL) group over 127.0.0.1 and all_reduce, broadcast and all_gather give
    every rank the exact result; skip with fewer than 2 GPUs.

    Not proven: multi-node communication, bandwidth, or collectives other than these three."""
    torch = ctx.torch
    world = _dist.gpu_world(ctx)
    _dist.available(torch, "nccl")
    answers = _dist.run_ranks("collectives", world, backend="nccl", device="cuda", n=4096)
    _dist.verify(answers, ["all_reduce", "broadcast", "all_gather"], "nccl collectives")
    ctx.claim(
        library="RCCL" if ctx.vendor == "amd" else "NCCL",
        source="torch.distributed nccl backend, %d processes, one per GPU" % world,
    )
    return Report(
        "nccl all_reduce/broadcast/all_gather exact on %d ranks (one per GPU)" % world,
        {"world_size": world, "processes": world},
    )


@gpu_feature("features.cuda.graphs", "torch.cuda.CUDAGraph")
def cuda_graphs(ctx):
    """A matmul+bias captured in a torch.cuda.CUDAGraph replays on new input data and matches float64.

    Not proven: graphs with collectives, dynamic shapes or memory pools shared between graphs."""
    torch = ctx.torch
    ctx.require_attr(torch, "cuda.CUDAGraph")
    ctx.require_attr(torch, "cuda.graph")
    ctx.require_gpu()
    w = randn(torch, 256, 256, seed=54).cuda()
    static_in = torch.zeros(64, 256, device="cuda")
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            static_in @ w + 1.0
    torch.cuda.current_stream().wait_stream(side)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        static_out = static_in @ w + 1.0
    errs = []
    for seed in (55, 56):
        x = randn(torch, 64, 256, seed=seed)
        static_in.copy_(x.cuda())
        g.replay()
        torch.cuda.synchronize()
        errs.append(
            ctx.assert_close(static_out, x.double() @ w.cpu().double() + 1.0, 5e-3, "graph replay")
        )
    return Report(
        "captured matmul+bias replayed twice, rel err %.1e" % max(errs), {"rel_error": max(errs)}
    )


@gpu_feature("features.cuda.tunableop", "TunableOp", library="hipBLASLt/cuBLASLt")
def tunableop(ctx):
    """With torch.cuda.tunable enabled, a float16 GEMM is tuned (a result is recorded) and still correct.

    Not proven: that the tuned choice is faster, or tuning of ops other than one float16 GEMM."""
    torch = ctx.torch
    tun = ctx.require_attr(torch, "cuda.tunable")
    ctx.require_gpu()
    tmp = tempfile.mkdtemp(prefix="valorch-tunableop-")
    was = tun.is_enabled()
    try:
        tun.set_filename(os.path.join(tmp, "tunableop_results.csv"))
        if hasattr(tun, "set_max_tuning_iterations"):
            tun.set_max_tuning_iterations(10)
        tun.enable(True)
        tun.tuning_enable(True)
        if not tun.is_enabled():
            raise Fail("torch.cuda.tunable.enable(True) did not enable TunableOp")
        a, b = randn(torch, 320, 192, seed=57).half(), randn(torch, 192, 224, seed=58).half()
        got = a.cuda() @ b.cuda()
        torch.cuda.synchronize()
        err = ctx.assert_close(got, a.double() @ b.double(), 5e-3, "tuned fp16 GEMM")
        results = tun.get_results()
        if not results:
            raise Fail("TunableOp enabled, yet no tuning result was recorded for the GEMM")
        return Report(
            "%d tuned result(s), rel err %.1e" % (len(results), err),
            {"results": len(results), "rel_error": err, "first": str(next(iter(results)))[:300]},
        )
    finally:
        tun.enable(was)
        shutil.rmtree(tmp, ignore_errors=True)


@gpu_feature("features.cuda.nvtx", "NVIDIA Tools Extension (NVTX)", library="roctx/NVTX", version=4)
def nvtx(ctx):
    """torch.cuda.nvtx range_push / range_pop around a tiny GPU workload, run under the image's profiler (nsys,
    rocprofv3 or rocprof): the range must appear in the profiler's record. With no such profiler in the image
    the calls returning proves nothing (a build without NVTX returns too): skip "not measurable: no profiler".

    Not proven: nested ranges, marks, or other tools' handling of the ranges."""
    torch = ctx.torch
    nv = ctx.require_attr(torch, "cuda.nvtx")
    ctx.require_attr(nv, "range_push")
    ctx.require_gpu()
    depth = attempt("nvtx.range_push", lambda: nv.range_push("valorch"))
    nv.mark("valorch-mark")
    nv.range_pop()
    from ._profiling import RANGE, ranges_seen

    seen = ranges_seen(ctx)
    metrics = {"depth": depth}
    if seen is None:
        metrics["range_seen"] = "not measurable in this image: no profiler"
        raise Skip(
            "not measurable: no profiler in this image (nsys, rocprofv3, rocprof) to see the range; "
            "range_push/mark/range_pop returned (depth %s)" % depth,
            metrics,
        )
    metrics.update(tool=seen["tool"], recorded=";".join(seen["names"])[:500])
    if not seen["seen"]:
        raise Fail(
            "%s profiled the workload but its record has no range %r (it has: %s)"
            % (seen["tool"], RANGE, "; ".join(seen["names"][:6]) or "nothing"),
            metrics,
        )
    ctx.claim(
        library="roctx" if ctx.vendor == "amd" else "NVTX",
        source="%s recorded range %s" % (seen["tool"], RANGE),
    )
    return Report("%s recorded the NVTX/roctx range %r" % (seen["tool"], RANGE), metrics)


# jiterator's launch on a build without it: at::cuda::CompileAndLaunchKernel is
# TORCH_CHECK(false, "Jiterator is not supported on ROCm") where AT_USE_JITERATOR() is false
# (pytorch/pytorch aten/src/ATen/cuda/jiterator.h, aten/src/ATen/jit_macros.h)
JITERATOR_ABSENT = "Jiterator is not supported"

_RTC_PROBE = (
    r"""
import sys, torch
def mapped():
    with open("/proc/self/maps") as fh:
        return sorted(set(l.split()[-1] for l in fh if ("nvrtc" in l or "hiprtc" in l) and "/" in l))
at_import = mapped()
torch.cuda.init(); x = torch.ones(64, device="cuda"); (x @ x).item()
before = mapped()
fn = torch.cuda.jiterator._create_jit_fn("template <typename T> T valorch_sq(T x) { return x * x + T(1); }")
try:
    y = fn(torch.full((64,), 3.0, device="cuda"))
except RuntimeError as exc:
    if "%s" not in str(exc):
        raise
    print("NOJIT", str(exc).splitlines()[0][:300]); sys.exit(0)
torch.cuda.synchronize()
after = mapped()
print("IMPORT", ";".join(at_import)); print("BEFORE", ";".join(before))
print("AFTER", ";".join(after)); print("VALUE", float(y[0]))
"""
    % JITERATOR_ABSENT
)


@gpu_feature("features.cuda.lazy_nvrtc", "Lazy loading NVRTC", library="hipRTC/NVRTC", version=3)
def lazy_nvrtc(ctx):
    """In a fresh process a kernel JIT-compiled through the runtime compiler (NVRTC / hipRTC, by
    jiterator) computes correctly, and the compiler is mapped only from its first JIT use on (the
    row: loaded lazily). Where it was mapped before (metric ``loading``: "at import torch", as the
    CUDA wheels do since the 2.6 cycle, preloading the nvidia-* libraries, NVRTC among them:
    pytorch/pytorch#145582; or "at CUDA init"), lazy loading is not measurable: partial, the JIT
    proven and the loading not. Unsupported only where the build has no JIT path at all
    (jiterator is compiled out of ROCm builds: aten/src/ATen/cuda/jiterator.h).

    Not proven: anything about NVRTC's/hipRTC's compile speed or the kernels it generates."""
    torch = ctx.torch
    ctx.require_attr(torch, "cuda.jiterator._create_jit_fn")
    ctx.require_gpu()
    proc = subprocess.run(
        [sys.executable, "-c", _RTC_PROBE],
        capture_output=True,
        timeout=300,
    )
    out = proc.stdout.decode("utf-8", "replace")
    if proc.returncode != 0:
        raise Fail("probe process failed: %s" % proc.stderr.decode("utf-8", "replace")[-1500:])
    return rtc_verdict(dict(ln.split(" ", 1) for ln in out.splitlines() if " " in ln))


def rtc_verdict(lines: Dict[str, str]) -> Report:
    """The lazy-NVRTC row's verdict from the child's lines (NOJIT, IMPORT, BEFORE, AFTER, VALUE:
    ``_RTC_PROBE``), each a ``;``-joined list of mapped runtime-compiler paths."""
    if "NOJIT" in lines:
        raise Unsupported(
            "no runtime-compiled kernel in this build: jiterator is compiled out of it "
            "(AT_USE_JITERATOR() false, aten/src/ATen/cuda/jiterator.h): %s" % lines["NOJIT"]
        )
    at_import, before, after = (
        [p for p in lines.get(k, "").split(";") if p] for k in ("IMPORT", "BEFORE", "AFTER")
    )
    loading = "at import torch" if at_import else "at CUDA init" if before else "on first JIT use"
    metrics: Dict[str, Any] = {
        "at_import": at_import,
        "before": before,
        "after": after,
        "loading": loading,
        "value": lines.get("VALUE"),
    }
    if lines.get("VALUE", "").strip() != "10.0":
        raise Fail("JIT kernel computed %s, expected 10.0" % lines.get("VALUE"), metrics)
    if not after:
        raise Fail("a kernel was JIT-compiled but no NVRTC/hipRTC library is mapped", metrics)
    if before:  # at_import is a subset of what was mapped before the first JIT use
        raise Partial(
            "partial support: the JIT kernel is correct, but lazy loading is not measurable: the "
            "runtime compiler was already mapped %s, before any JIT use (the CUDA wheels preload "
            "it: pytorch/pytorch#145582): %s" % (loading, ", ".join(at_import or before)),
            metrics,
        )
    return Report(
        "JIT kernel correct; the runtime compiler loaded %s: %s" % (loading, ", ".join(after)),
        metrics,
    )


@gpu_feature("features.cuda.jiterator", "Jiterator (beta)", library="hipRTC/NVRTC")
def jiterator(ctx):
    """A kernel written as a C++ string and compiled by torch.cuda.jiterator computes alpha*x+y correctly.

    Not proven: other jiterator signatures (multiple outputs, complex dtypes) or performance."""
    torch = ctx.torch
    make = ctx.require_attr(torch, "cuda.jiterator._create_jit_fn")
    ctx.require_gpu()
    code = "template <typename T> T valorch_axpy(T x, T y, T alpha) { return alpha * x + y; }"
    fn = attempt("jiterator compile", lambda: make(code, alpha=1.0))
    x, y = randn(torch, 4096, seed=59), randn(torch, 4096, seed=60)
    dx, dy = x.cuda(), y.cuda()
    try:  # _create_jit_fn only parses; the launch is what a build without jiterator refuses
        got = fn(dx, dy, alpha=2.5)
    except RuntimeError as exc:
        if JITERATOR_ABSENT not in str(exc):
            raise
        raise Unsupported(
            "jiterator is compiled out of this build (AT_USE_JITERATOR() false on ROCm: "
            "aten/src/ATen/jit_macros.h); the launch said: %s" % str(exc).splitlines()[0][:300]
        ) from exc
    err = ctx.assert_close(got, 2.5 * x.double() + y.double(), 1e-6, "jiterator axpy")
    return Report("jiterated axpy rel err %.1e" % err, {"rel_error": err})
