"""Profiler and SMI rows say what the host, not the image, lacks: ncu without permission
for the performance counters (ERR_NVGPUCTRPERM, with cap_drop=ALL) is a skip naming the
host's fix; nvidia-smi, which the NVIDIA container runtime injects, is a skip when absent;
a profiler the image lacks on a GPU host is unsupported. The real probe runs against the
H100 stand-in of tests/fixtures/fake_torch."""

import json

from gpu_fakes import FIX, run_probe, tool_printing

REAL_NCU = FIX / "tools" / "real" / "ncu-err-nvgpuctrperm.txt"


def test_ncu_without_counter_permission_is_a_skip_with_the_hosts_fix(tmp_path):
    bindir = tmp_path / "bin"
    # the real message (NVIDIA/TensorRT-LLM#183), ncu exiting 0 as it does when the app ran
    tool_printing(bindir, "ncu", FIX / "tools" / "real" / "ncu-err-nvgpuctrperm.txt")
    res = run_probe(tmp_path, "cuda-h100", "profiler", "profiler.tool.ncu", bindir=bindir)
    ncu = res["profiler.tool.ncu"]
    assert ncu["status"] == "skip", ncu["message"]
    assert (
        "ERR_NVGPUCTRPERM" in ncu["message"]
        and "NVreg_RestrictProfilingToAdminUsers=0" in ncu["message"]
    )
    assert "Not a property of the image" in ncu["message"]
    assert (
        "--profiling-caps" in ncu["message"]
    )  # the opt-in alternative (tests/acceptance/test_profiling_caps.py)


def test_nvidia_smi_absent_on_a_gpu_host_is_the_runtimes_not_the_images(tmp_path):
    res = run_probe(
        tmp_path, "cuda-h100", "profiler", "profiler.smi.nvidia_smi", "profiler.tool.nsys"
    )
    assert res["profiler.smi.nvidia_smi"]["status"] == "skip"
    assert "NVIDIA container runtime injects it" in res["profiler.smi.nvidia_smi"]["message"]
    assert res["profiler.tool.nsys"]["status"] == "unsupported"  # a GPU, and no nsys in the image


def test_smi_reporting_another_arch_fails(tmp_path):
    bindir = tmp_path / "bin"
    # a real capture of a TITAN V and an RTX 5880 (triton-inference-server/server#8070): no sm_90
    tool_printing(
        bindir, "nvidia-smi", FIX / "tools" / "real" / "nvidia-smi-query-gpu-titanv-rtx5880.csv"
    )
    res = run_probe(tmp_path, "cuda-h100", "profiler", "profiler.smi.nvidia_smi", bindir=bindir)
    smi = res["profiler.smi.nvidia_smi"]
    assert smi["status"] == "fail" and "sm_70,sm_89" in smi["message"] and "sm_90" in smi["message"]


AMD_ROWS = (
    "profiler.tool.rocprofv3",
    "profiler.tool.rocprof",
    "profiler.smi.rocm_smi",
    "profiler.smi.amd_smi",
)
NVIDIA_ROWS = ("profiler.tool.nsys", "profiler.tool.ncu", "profiler.smi.nvidia_smi")


def test_on_a_host_without_a_gpu_every_own_vendor_tool_row_is_a_skip(tmp_path):
    """The GPU is tested before the tool: present or absent, no tool row of the build's own
    vendor reads unsupported on a host without a GPU, and the skip says whether the image has
    the tool."""
    bindir = tmp_path / "bin"
    tool_printing(bindir, "rocprofv3", REAL_NCU)  # present (what it prints does not matter here)
    rocm = json.loads((FIX / "fake_torch" / "rocm-mi300x.json").read_text())
    rocm["devices"] = []
    no_gpu = tmp_path / "rocm-no-gpu.json"
    no_gpu.write_text(json.dumps(rocm))
    res = run_probe(tmp_path, no_gpu, "profiler", *AMD_ROWS, bindir=bindir)
    assert {c: res[c]["status"] for c in AMD_ROWS} == dict.fromkeys(AMD_ROWS, "skip")
    assert "rocprofv3 is present" in res["profiler.tool.rocprofv3"]["message"]
    assert all("needs a GPU" in res[c]["message"] for c in AMD_ROWS)
    res = run_probe(tmp_path / "cuda", "cuda-build-no-gpu", "profiler", *NVIDIA_ROWS)
    assert {c: res[c]["status"] for c in NVIDIA_ROWS} == dict.fromkeys(NVIDIA_ROWS, "skip")
    assert "nsys is not in this image either" in res["profiler.tool.nsys"]["message"]


def test_another_vendors_tool_rows_do_not_apply(tmp_path):
    """rocprof, rocprofv3, rocm-smi, amd-smi on a CUDA build and nsys, ncu, nvidia-smi on a ROCm
    build are n/a (no layout counts them), present or not, GPU or not; nvidia-smi on an AMD
    image never blames the NVIDIA container runtime."""
    bindir = tmp_path / "bin"
    tool_printing(bindir, "rocprofv3", REAL_NCU)
    tool_printing(bindir, "nsys", REAL_NCU)
    for build, rows in (
        ("cuda-h100", AMD_ROWS),
        ("cuda-build-no-gpu", AMD_ROWS),
        ("rocm-mi300x", NVIDIA_ROWS),
    ):
        res = run_probe(tmp_path / build, build, "profiler", *rows, bindir=bindir)
        assert {c: res[c]["status"] for c in rows} == dict.fromkeys(rows, "n/a"), build
        assert all("the row does not apply" in res[c]["message"] for c in rows)
    assert "container runtime" not in res["profiler.smi.nvidia_smi"]["message"]
