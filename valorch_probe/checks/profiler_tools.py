"""profiler: the external profilers and SMI tools of an image, made to prove
their row. A profiler profiles a tiny torch workload in a child process and the
tiny kernel's name must appear in what it recorded; an SMI tool must read back
a device field (name, gfx arch or compute capability) that matches what torch
sees. Tools run as argv lists (never shell strings), always with a timeout.

No GPU: skip, whatever the image holds (the GPU is tested first: on a CPU host a
profiler row says "needs a GPU", never "unsupported"). GPU but absent tool:
unsupported, except nvidia-smi, which the container runtime injects (skip). The output
parsers (tool_output.py) are unit-tested on real captures (tests/fixtures/tools/README.md);
these paths have not yet run on a real GPU (see docs/checks.md)."""

from __future__ import annotations

import shutil
import tempfile
from typing import Any, Dict, List

from .. import tool_output
from ..context import Fail, NotApplicable, Report, Skip
from ..registry import check
from ._common import find_tool, run_tool, tool_or_unsupported
from ._profiling import (  # noqa: F401 (TINY, RANGE: the workloads' names, read by tests)
    RANGE,
    TINY,
    TINY_KERNELS,
    recorded_names,
    run,
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
    "rocminfo": "amd",
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
    needs = ("gpu", TOOL_VENDOR[tool])  # the vendor: n/a on the other's images
    check(cid, feature, "profiler", "profiler", library=library, version=2, needs=needs)(fn)


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


# the parser of each AMD tool's device list
_AMD_DEVICES = {
    "rocminfo": tool_output.rocminfo_agents,
    "rocm-smi": tool_output.rocm_smi_cards,
    "amd-smi": tool_output.amd_smi_gpus,
}


def smi_readback(tool: str, text: str, gpus: List[Dict[str, str]]) -> Dict[str, Any]:
    """Compare an SMI tool's device fields with what torch sees: the first GPU's
    arch (AMD: gfx; NVIDIA: compute capability) must be among the tool's devices."""
    if tool in _AMD_DEVICES:
        devs = [{"name": d["name"], "arch": d["gfx"]} for d in _AMD_DEVICES[tool](text)]
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
    "rocminfo": ["rocminfo"],
    "rocm-smi": ["rocm-smi", "--showproductname", "--json"],
    "amd-smi": ["amd-smi", "static", "--asic", "--json"],
    "nvidia-smi": [
        "nvidia-smi",
        "--query-gpu=index,name,compute_cap,driver_version",
        "--format=csv",
    ],
}


def no_gpu_said(ctx, tool: str) -> None:
    """Without a GPU a present tool still runs, for real: its row is a skip in the tool's own
    words (its exit status, the devices it printed, its last lines), never a failure of the
    image and never a device it did not print."""
    exe = None if ctx.gpu_available else find_tool(tool)
    if exe is None:
        return
    argv = [exe, *_SMI[tool][1:]]
    try:
        res = run(argv, cwd=tempfile.gettempdir(), timeout=60)
    except Fail as exc:  # a tool that hangs without a GPU says so by its timeout
        raise Skip("reading a device back needs a GPU; none is visible: %s" % exc) from exc
    facts = smi_readback(tool, res["output"], [])
    said = tool_output.last_words(res["output"])
    raise Skip(
        "reading a device back needs a GPU; none is visible (device: cpu); %s ran: exit %d, "
        "%d device(s) printed, it said: %s%s"
        % (" ".join(_SMI[tool]), res["returncode"], facts["devices"], said, ctx.no_gpu_why()),
        dict(facts, path=exe, returncode=res["returncode"], said=said),
    )


def _smi_check(cid: str, feature: str, tool: str, library: str) -> None:
    def fn(ctx):
        not_applicable(ctx, tool)
        no_gpu_said(ctx, tool)
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
        "or compute capability) equals the arch torch sees; n/a on the other vendor's build; without a "
        "GPU the tool still runs and the skip quotes its exit status and last words.\n\n"
        "Not proven: the tool's telemetry "
        "(power, clocks, memory, utilisation) or its management commands." % " ".join(_SMI[tool])
    )
    needs = ("gpu", TOOL_VENDOR[tool])  # the vendor: n/a on the other's images
    check(cid, feature, "command", "profiler", library=library, version=2, needs=needs)(fn)


_smi_check("profiler.smi.rocminfo", "rocminfo", "rocminfo", "ROCr (HSA runtime)")
_smi_check("profiler.smi.rocm_smi", "rocm-smi", "rocm-smi", "ROCm SMI")
_smi_check("profiler.smi.amd_smi", "amd-smi", "amd-smi", "AMD SMI")
_smi_check("profiler.smi.nvidia_smi", "nvidia-smi", "nvidia-smi", "NVML")
