"""profiler: the external profilers and SMI tools of an image, made to prove
their row. A profiler profiles a tiny torch workload in a child process and the
tiny kernel's name must appear in what it recorded; an SMI tool must read back
a device field (name, gfx arch or compute capability) that matches what torch
sees. Tools run as argv lists (never shell strings), always with a timeout.

No GPU: skip, whatever the image holds (the GPU is tested first: on a CPU host a
profiler row says "needs a GPU", never "unsupported"). GPU but absent tool:
unsupported, except nvidia-smi, which the NVIDIA container runtime injects (its
absence is the runtime's configuration, not the image's: skip). ncu without
permission for the performance counters (ERR_NVGPUCTRPERM): skip with the host's
fix, never a failure of the image. The output parsers (tool_output.py) are
unit-tested on real captures (tests/fixtures/tools/README.md); these paths have
not yet run on a real GPU (see docs/checks.md)."""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import sys
import tempfile
from typing import Any, Dict, List, Optional, Sequence

from .. import tool_output
from ..context import Fail, NotApplicable, Report, Skip, Unsupported
from ..registry import check
from ._common import TOOL_DIRS, find_tool, first_lines, run_tool

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


def no_gpu_skip(ctx, tool: str, what: str) -> None:
    """The GPU is tested before the tool: without one the row is skipped, and the skip
    says whether the image has the tool."""
    if ctx.gpu_available:
        return
    exe = find_tool(tool)
    held = (
        ("%s is present (%s)" % (tool, exe)) if exe else ("%s is not in this image either" % tool)
    )
    raise Skip(
        "%s needs a GPU; none is visible (device: cpu); %s%s" % (what, held, ctx.no_gpu_why()),
        {"path": exe},
    )


# whose GPUs each tool serves: on the other vendor's build of torch its row does not apply
TOOL_VENDOR = {
    "rocprofv3": "amd",
    "rocprof": "amd",
    "rocm-smi": "amd",
    "amd-smi": "amd",
    "nsys": "nvidia",
    "ncu": "nvidia",
    "nvidia-smi": "nvidia",
}
_VENDOR_OF_BACKEND = {"rocm": "amd", "cuda": "nvidia"}
_BUILD = {"amd": "a ROCm (HIP)", "nvidia": "a CUDA"}


def not_applicable(ctx, tool: str) -> None:
    """n/a where the tool serves the other vendor's GPUs than the build (or, without torch, the
    image's catalogued backend) targets: rocprofv3 on a CUDA image is not missing, it is moot."""
    image = ctx.vendor or _VENDOR_OF_BACKEND.get(ctx.expect.get("backend", ""))
    serves = TOOL_VENDOR.get(tool)
    if image and serves and image != serves:
        raise NotApplicable(
            "%s serves %s GPUs; this is %s image: the row does not apply"
            % (tool, "AMD" if serves == "amd" else "NVIDIA", _BUILD[image]),
            {"tool_vendor": serves, "image_vendor": image},
        )


def tool_or_unsupported(name: str) -> str:
    exe = find_tool(name)
    if exe is None:
        raise Unsupported(
            "%s is not on PATH (nor in %s) in this image" % (name, ", ".join(TOOL_DIRS))
        )
    return exe


def run(argv: Sequence[str], cwd: str, timeout: float = TOOL_TIMEOUT_S) -> Dict[str, Any]:
    try:
        proc = subprocess.run(
            list(argv), cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout
        )
    except subprocess.TimeoutExpired as exc:
        raise Fail("%s passed its %ss timeout" % (" ".join(argv[:4]), timeout)) from exc
    return {"returncode": proc.returncode, "output": proc.stdout.decode("utf-8", "replace")}


def read_tree(root: str, pattern: str = "**/*.csv") -> Dict[str, str]:
    out = {}
    for path in glob.glob(os.path.join(root, pattern), recursive=True):
        try:
            with open(path, errors="replace") as fh:
                out[path] = fh.read(8 << 20)
        except OSError:
            continue
    return out


def recorded_names(tool: str, exe: str, script: str, tmp: str, ranges: bool = False) -> List[str]:
    """Run ``script`` under a profiler and return the names it recorded (kernels, or
    NVTX / roctx ranges with ``ranges``). Fails when the profiler itself fails."""
    py = [sys.executable, "-c", script]
    if tool == "rocprofv3":
        trace = "--marker-trace" if ranges else "--kernel-trace"
        res = run(
            [
                exe,
                trace,
                "--stats",
                "--output-format",
                "csv",
                "-d",
                tmp,
                "-o",
                "valorch",
                "--",
                *py,
            ],
            tmp,
        )
        files = read_tree(tmp)
        names = tool_output.rocprof_names(files)
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


def _profiler_check(cid: str, feature: str, tool: str, library: str) -> None:
    def fn(ctx):
        not_applicable(ctx, tool)
        no_gpu_skip(ctx, tool, "profiling a kernel")
        exe = tool_or_unsupported(tool)
        version = run_tool([tool, "--version"])
        tmp = tempfile.mkdtemp(prefix="valorch-%s-" % tool)
        try:
            names = recorded_names(tool, exe, TINY, tmp)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        found = tool_output.matching(names, TINY_KERNELS)
        metrics = {
            "path": exe,
            "version": version.get("version"),
            "names": len(names),
            "tiny_kernels": ";".join(found[:4])[:500],
        }
        if not found:
            raise Fail(
                "%s ran but its record has no kernel of the tiny workload (%s); it recorded: %s"
                % (tool, TINY_KERNELS, "; ".join(names[:8]) or "nothing"),
                metrics,
            )
        ctx.claim(
            library=library,
            device=ctx.device_label(),
            source="%s recorded %s" % (tool, found[0][:200]),
        )
        return Report("%s recorded the tiny workload's kernel %s" % (tool, found[0][:160]), metrics)

    fn.__doc__ = (
        "`%s` profiles a tiny torch workload (an element-wise multiply and a sum on the GPU) in a "
        "child process and its record names the workload's kernel; n/a on the other vendor's "
        "build.\n\nNot proven: that %s's "
        "timings or counters are accurate, or that it can profile other frameworks or "
        "multi-process jobs." % (tool, tool)
    )
    check(cid, feature, "profiler", "profiler", library=library, version=2, needs=("gpu",))(fn)


_profiler_check("profiler.tool.rocprofv3", "rocprofv3", "rocprofv3", "rocprofiler-sdk")
_profiler_check("profiler.tool.rocprof", "rocprof", "rocprof", "rocprofiler")
_profiler_check("profiler.tool.nsys", "Nsight Systems (nsys)", "nsys", "Nsight Systems")
_profiler_check("profiler.tool.ncu", "Nsight Compute (ncu)", "ncu", "Nsight Compute")


def _torch_gpus(ctx) -> List[Dict[str, str]]:
    torch = ctx.torch
    return [
        {"name": torch.cuda.get_device_name(i), "arch": ctx.gpu_arch(i)}
        for i in range(torch.cuda.device_count())
    ]


def smi_readback(tool: str, text: str, gpus: List[Dict[str, str]]) -> Dict[str, Any]:
    """Compare an SMI tool's device fields with what torch sees: the first GPU's
    arch (AMD: gfx; NVIDIA: compute capability) must be among the tool's devices."""
    if tool == "rocm-smi":
        devs = [{"name": d["name"], "arch": d["gfx"]} for d in tool_output.rocm_smi_cards(text)]
        same = tool_output.same_gfx
    elif tool == "amd-smi":
        devs = [{"name": d["name"], "arch": d["gfx"]} for d in tool_output.amd_smi_gpus(text)]
        same = tool_output.same_gfx
    else:
        devs = [
            {"name": d["name"], "arch": tool_output.sm_of(d["compute_cap"])}
            for d in tool_output.nvidia_smi_gpus(text)
        ]

        def same(reported: str, arch: str) -> bool:
            return reported == arch

    want = gpus[0]["arch"] if gpus else ""
    matched = [d for d in devs if want and same(d["arch"], want)]
    return {
        "devices": len(devs),
        "torch_arch": want,
        "tool_archs": ",".join(d["arch"] for d in devs),
        "tool_names": ",".join(sorted({d["name"] for d in devs}))[:300],
        "matched": bool(matched),
    }


_SMI = {
    "rocm-smi": ["rocm-smi", "--showproductname", "--json"],
    "amd-smi": ["amd-smi", "static", "--asic", "--json"],
    "nvidia-smi": [
        "nvidia-smi",
        "--query-gpu=index,name,compute_cap,driver_version",
        "--format=csv",
    ],
}


def _smi_check(cid: str, feature: str, tool: str, library: str) -> None:
    def fn(ctx):
        not_applicable(ctx, tool)
        no_gpu_skip(ctx, tool, "reading a device back")
        if tool == "nvidia-smi" and find_tool(tool) is None:
            raise Skip(
                "nvidia-smi is not in this container: the NVIDIA container runtime injects it (driver "
                "capability 'utility' of NVIDIA_DRIVER_CAPABILITIES), so its absence is the runtime's "
                "configuration, not a property of the image"
            )
        exe = tool_or_unsupported(tool)
        argv = [exe, *_SMI[tool][1:]]
        res = run(argv, cwd=tempfile.gettempdir(), timeout=60)
        if res["returncode"] != 0:
            raise Fail(
                "%s exited %d: %s" % (" ".join(_SMI[tool]), res["returncode"], res["output"][-500:])
            )
        facts = smi_readback(tool, res["output"], _torch_gpus(ctx))
        metrics = dict(facts, path=exe)
        if not facts["devices"]:
            raise Fail(
                "%s printed no device this check could read: %s" % (tool, res["output"][-300:]),
                metrics,
            )
        if not facts["torch_arch"]:
            raise Skip(
                "torch does not report this GPU's arch (no gcnArchName in this HIP build): nothing to "
                "compare %s's %s with" % (tool, facts["tool_archs"]),
                metrics,
            )
        if not facts["matched"]:
            raise Fail(
                "%s reports %s, torch sees %s" % (tool, facts["tool_archs"], facts["torch_arch"]),
                metrics,
            )
        ctx.claim(
            library=library,
            device=ctx.device_label(),
            source="%s read back %s" % (tool, facts["torch_arch"]),
        )
        return Report(
            "%s reads back %d device(s); %s matches torch's %s"
            % (tool, facts["devices"], facts["tool_names"] or "device", facts["torch_arch"]),
            metrics,
        )

    fn.__doc__ = (
        "`%s` (argv list, timeout) lists the GPUs and the arch it reports for one of them (gfx target "
        "or compute capability) equals the arch torch sees; n/a on the other vendor's build.\n\n"
        "Not proven: the tool's telemetry "
        "(power, clocks, memory, utilisation) or its management commands." % " ".join(_SMI[tool])
    )
    check(cid, feature, "command", "profiler", library=library, version=2, needs=("gpu",))(fn)


_smi_check("profiler.smi.rocm_smi", "rocm-smi", "rocm-smi", "ROCm SMI")
_smi_check("profiler.smi.amd_smi", "amd-smi", "amd-smi", "AMD SMI")
_smi_check("profiler.smi.nvidia_smi", "nvidia-smi", "nvidia-smi", "NVML")


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
