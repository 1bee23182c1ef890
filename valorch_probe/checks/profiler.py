"""profiler: torch.profiler records operators and (on a GPU) device kernels and
memory; the external profilers and SMI tools of the image run as argv lists
(never shell strings, always with a timeout) and their output is parsed."""

from __future__ import annotations

import json
import os
import shutil
import tempfile

from .. import evidence
from ..context import Fail, Report
from ..observe import process_maps
from ..registry import checks_of, suite
from ._common import attempt, randn

profiler_check = checks_of("profiler", "profiler")

suite(
    "profiler",
    "torch",
    "torch.profiler (operators, device kernels, memory, traces) and external profilers / SMI tools.",
)


def _workload(torch, device):
    a = randn(torch, 256, 256, seed=100).to(device)
    b = torch.nn.functional.relu(a @ a)
    c = torch.softmax(b, dim=-1).sum()
    return float(c)


def _profiler(ctx):
    torch = ctx.torch
    prof = ctx.require_attr(torch, "profiler")
    ctx.require_attr(prof, "profile")
    ctx.require_attr(prof, "ProfilerActivity")
    return prof


@profiler_check("profiler.torch_profiler.cpu_ops", "torch.profiler (operators)")
def cpu_ops(ctx):
    """torch.profiler with CPU activity records the aten operators of a matmul/relu/softmax workload
    with call counts and times.

    Not proven: device activity (device_kernels does), profiler overhead, or schedule-based profiling."""
    torch = ctx.torch
    prof = _profiler(ctx)
    with prof.profile(activities=[prof.ProfilerActivity.CPU], record_shapes=True) as p:
        _workload(torch, "cpu")
    keys = {e.key: e for e in p.key_averages()}
    want = ["aten::mm", "aten::relu", "aten::softmax"]
    missing = [k for k in want if k not in keys and k.replace("softmax", "_softmax") not in keys]
    if missing:
        raise Fail("profile lacks %s (has %s)" % (missing, sorted(keys)[:20]))
    mm = keys["aten::mm"]
    if mm.count < 1 or mm.cpu_time_total <= 0:
        raise Fail("aten::mm recorded with count %s and time %s" % (mm.count, mm.cpu_time_total))
    return Report(
        "%d operator kinds recorded; aten::mm %.0f us" % (len(keys), mm.cpu_time_total),
        {"operators": len(keys), "mm_cpu_us": float(mm.cpu_time_total)},
    )


@profiler_check(
    "profiler.torch_profiler.device_kernels",
    "torch.profiler (device activity)",
    library="roctracer/CUPTI",
    version=2,
    needs=("gpu",),
)
def device_kernels(ctx):
    """torch.profiler with device activity records the GPU kernels (with device time) behind a matmul workload;
    the row's library is the tracing library that delivered them (CUPTI, roctracer or rocprofiler-sdk: the one
    mapped into the process), not the GEMM libraries of the kernels it saw.

    Not proven: accurate kernel timings, or activity of other processes."""
    torch = ctx.torch
    prof = _profiler(ctx)
    ctx.require_gpu()
    with prof.profile(activities=[prof.ProfilerActivity.CPU, prof.ProfilerActivity.CUDA]) as p:
        _workload(torch, "cuda")
        torch.cuda.synchronize()
    kernels = [e for e in p.events() if "cuda" in str(getattr(e, "device_type", "")).lower()]
    device_us = sum(
        float(getattr(e, "device_time", None) or getattr(e, "cuda_time", 0) or 0) for e in kernels
    )
    if not kernels:
        raise Fail(
            "no device events recorded (the tracing library did not deliver kernel activity)"
        )
    names = sorted({e.name for e in kernels})
    libs = evidence.libraries_of(names, ctx.vendor)
    tracer, how = evidence.tracing_library(process_maps(), ctx.vendor, ctx.config())
    ctx.claim(library=tracer, source="%s; kernel names: %s" % (how, "; ".join(names[:6])))
    return Report(
        "%s delivered %d device events (%d kernel names: %s), %.0f us device time"
        % (tracer, len(kernels), len(names), evidence.label(libs) or "unattributed", device_us),
        {
            "device_events": len(kernels),
            "kernel_names": names[:20],
            "device_us": device_us,
            "tracing_library": tracer,
            "kernel_libraries": evidence.label(libs) or "unattributed",
        },
    )


@profiler_check("profiler.torch_profiler.memory", "torch.profiler (memory)")
def profile_memory(ctx):
    """torch.profiler(profile_memory=True) attributes the allocations of a workload to the operators that made them.

    Not proven: the allocator's totals (memory_stats does), or memory of other processes."""
    torch = ctx.torch
    prof = _profiler(ctx)
    acts = [prof.ProfilerActivity.CPU]
    if ctx.gpu_available:
        acts.append(prof.ProfilerActivity.CUDA)
    with prof.profile(activities=acts, profile_memory=True) as p:
        _workload(torch, ctx.device)
        ctx.synchronize()
    field = "cpu_memory_usage" if ctx.device == "cpu" else "device_memory_usage"
    usage = {}
    for e in p.key_averages():
        n = int(getattr(e, field, None) or getattr(e, field.replace("device", "cuda"), 0) or 0)
        if n > 0:
            usage[e.key] = n
    if not usage:
        raise Fail(
            "profile_memory attributed no %s to any operator of a workload that allocates" % field
        )
    top = max(usage, key=lambda k: usage[k])
    return Report(
        "%s recorded for %d operators; largest %s: %d bytes" % (field, len(usage), top, usage[top]),
        {
            "operators_allocating": len(usage),
            "largest_op": top,
            "largest_bytes": usage[top],
            "field": field,
        },
    )


@profiler_check("profiler.torch_profiler.chrome_trace", "torch.profiler (trace export)")
def chrome_trace(ctx):
    """A torch.profiler trace exports to Chrome trace JSON that parses and contains the profiled operators.

    Not proven: that the trace opens in a viewer, or device events in the trace."""
    torch = ctx.torch
    prof = _profiler(ctx)
    tmp = tempfile.mkdtemp(prefix="valorch-trace-")
    try:
        with prof.profile(activities=[prof.ProfilerActivity.CPU]) as p:
            _workload(torch, "cpu")
        path = os.path.join(tmp, "trace.json")
        p.export_chrome_trace(path)
        with open(path) as fh:
            trace = json.load(fh)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    events = trace.get("traceEvents", []) if isinstance(trace, dict) else trace
    names = {e.get("name") for e in events if isinstance(e, dict)}
    if "aten::mm" not in names:
        raise Fail("exported trace has %d events but no aten::mm" % len(events))
    return Report("trace with %d events exported and parsed" % len(events), {"events": len(events)})


@profiler_check("profiler.cuda_memory_snapshot", "Memory snapshot", needs=("gpu",))
def memory_snapshot(ctx):
    """torch.cuda.memory._record_memory_history records allocations and _snapshot() returns them with their sizes.

    Not proven: the stack traces of the history, or the snapshot visualiser."""
    torch = ctx.torch
    mem = ctx.require_attr(torch, "cuda.memory")
    record = ctx.require_attr(mem, "_record_memory_history")
    snap = ctx.require_attr(mem, "_snapshot")
    ctx.require_gpu()
    attempt("_record_memory_history", lambda: record(True))
    try:
        keep = torch.empty(8 << 20, dtype=torch.uint8, device="cuda")
        s = snap()
    finally:
        try:
            record(None)
        except Exception:
            record(False)
    segs = s.get("segments", []) if isinstance(s, dict) else s
    total = sum(int(seg.get("total_size", 0)) for seg in segs)
    if total < keep.numel():
        raise Fail("snapshot segments total %d bytes, below a live 8 MiB tensor" % total)
    return Report(
        "%d segments, %d MiB" % (len(segs), total >> 20), {"segments": len(segs), "bytes": total}
    )
