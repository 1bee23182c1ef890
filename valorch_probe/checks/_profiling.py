"""The profilers' shared machinery: the tiny workloads they record, running a tool with a
timeout, and reading back what it recorded. A helper module (it registers no check), so
that a check of another suite (``features.cuda.nvtx``) can profile its ranges without
importing ``profiler_tools``, whose checks belong to the profiler suite."""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import sys
import tempfile
from typing import Any, Dict, List, Optional, Sequence

from .. import read_text, tool_output
from ..context import Fail, Skip
from ._common import find_tool, first_lines

# The tiny workload every profiler records: an element-wise multiply and a sum on the GPU.
TINY = (
    "import torch\nx = torch.ones(1 << 20, device='cuda')\ny = (x * 3.0).sum()\n"
    "torch.cuda.synchronize()\nprint('VALORCH_TINY', float(y))\n"
)
TINY_KERNELS = r"elementwise_kernel|reduce_kernel"  # ATen's names, kept by HIP builds too
# The tiny workload with an NVTX / roctx range around it.
RANGE = "valorch-nvtx-range"
RANGED = (
    "import torch\ntorch.cuda.init()\nnv = torch.cuda.nvtx\nnv.range_push(%r)\n"
    "x = torch.ones(1 << 20, device='cuda')\ny = (x * 3.0).sum()\ntorch.cuda.synchronize()\n"
    "nv.range_pop()\nprint('VALORCH_TINY', float(y))\n" % RANGE
)
TOOL_TIMEOUT_S = 240.0
# Nsight Compute's error when the driver keeps the performance counters to admin users
# (https://developer.nvidia.com/ERR_NVGPUCTRPERM); the probe runs with cap_drop=ALL.
COUNTER_PERMISSION = "ERR_NVGPUCTRPERM"
COUNTER_FIX = (
    "ncu cannot read the GPU performance counters (ERR_NVGPUCTRPERM): the driver allows "
    "profiling to admin users only and valorch drops every capability. Not a property of "
    "the image. Fix on the host: load the nvidia module with "
    "NVreg_RestrictProfilingToAdminUsers=0, or (trusted images) run with valorch run "
    "--profiling-caps (see docs/checks.md, profiler.tool.ncu)"
)


def run(argv: Sequence[str], cwd: str, timeout: float = TOOL_TIMEOUT_S) -> Dict[str, Any]:
    try:
        proc = subprocess.run(
            list(argv), cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout
        )
    except subprocess.TimeoutExpired as exc:
        raise Fail("%s passed its %ss timeout" % (" ".join(argv[:4]), timeout)) from exc
    return {"returncode": proc.returncode, "output": proc.stdout.decode("utf-8", "replace")}


def read_tree(root: str, pattern: str = "**/*.csv") -> Dict[str, str]:
    paths = glob.glob(os.path.join(root, pattern), recursive=True)
    return {path: read_text(path, 8 << 20) for path in paths}


def recorded_names(tool: str, exe: str, script: str, tmp: str, ranges: bool = False) -> List[str]:
    """Run ``script`` under a profiler and return the names it recorded (kernels, or
    NVTX / roctx ranges with ``ranges``). Fails when the profiler itself fails."""
    py = [sys.executable, "-c", script]
    if tool == "rocprofv3":
        trace = "--marker-trace" if ranges else "--kernel-trace"
        options = [trace, "--stats", "--output-format", "csv", "-d", tmp, "-o", "valorch"]
        res = run([exe, *options, "--", *py], tmp)
        names = tool_output.rocprof_names(read_tree(tmp))
    elif tool == "rocprof":
        flag = ["--roctx-trace"] if ranges else []
        res = run([exe, "--stats", *flag, "-o", os.path.join(tmp, "results.csv"), *py], tmp)
        names = tool_output.rocprof_names(read_tree(tmp))
    elif tool == "nsys":
        rep = os.path.join(tmp, "valorch")
        res = run(
            [exe, "profile", "--trace", "cuda,nvtx", "--force-overwrite", "true", "-o", rep, *py],
            tmp,
        )
        names = []
        for report in ("nvtx_sum", "nvtxsum") if ranges else ("cuda_gpu_kern_sum", "gpukernsum"):
            stats = run(
                [exe, "stats", "--report", report, "--format", "csv", rep + ".nsys-rep"], tmp
            )
            names = tool_output.nsys_names(stats["output"])
            if names:
                break
    elif tool == "ncu":
        res = run(
            [exe, "--csv", "--metrics", "gpu__time_duration.sum", "--launch-count", "4", *py], tmp
        )
        if COUNTER_PERMISSION in res["output"]:  # ncu may exit 0 having profiled nothing
            raise Skip(COUNTER_FIX, {"returncode": res["returncode"]}, log=res["output"][-4000:])
        names = tool_output.ncu_names(res["output"])
    else:  # pragma: no cover - every caller names a known tool
        raise ValueError(tool)
    if res["returncode"] != 0:
        raise Fail(
            "%s exited %d profiling the tiny workload: %s"
            % (tool, res["returncode"], " | ".join(first_lines(res["output"], 4))),
            {"returncode": res["returncode"]},
            log=res["output"][-4000:],
        )
    return names


def ranges_seen(ctx) -> Optional[Dict[str, Any]]:
    """Profile the ranged workload with the first profiler the image has that records
    NVTX / roctx ranges; None when it has none."""
    for tool in ("nsys", "rocprofv3", "rocprof"):
        exe = find_tool(tool)
        if exe is None:
            continue
        tmp = tempfile.mkdtemp(prefix="valorch-ranges-")
        try:
            names = recorded_names(tool, exe, RANGED, tmp, ranges=True)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        return {"tool": tool, "seen": bool(tool_output.matching(names, RANGE)), "names": names[:10]}
    return None
