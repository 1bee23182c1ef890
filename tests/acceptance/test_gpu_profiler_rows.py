"""Profiler and SMI rows say what the host, not the image, lacks: ncu without permission
for the performance counters (ERR_NVGPUCTRPERM, with cap_drop=ALL) is a skip naming the
host's fix; nvidia-smi, which the NVIDIA container runtime injects, is a skip when absent;
a profiler the image lacks on a GPU host is unsupported. The real probe runs against the
H100 stand-in of tests/fixtures/fake_torch."""

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


def test_on_a_host_without_a_gpu_every_profiler_and_smi_row_is_a_skip(tmp_path):
    """The GPU is tested before the tool: present or absent, no tool row reads unsupported on a
    host without a GPU, and the skip says whether the image has the tool."""
    bindir = tmp_path / "bin"
    tool_printing(bindir, "rocprofv3", REAL_NCU)  # present (what it prints does not matter here)
    rows = (
        "profiler.tool.rocprofv3",
        "profiler.tool.rocprof",
        "profiler.tool.nsys",
        "profiler.tool.ncu",
        "profiler.smi.rocm_smi",
        "profiler.smi.amd_smi",
        "profiler.smi.nvidia_smi",
    )
    res = run_probe(tmp_path, "cuda-build-no-gpu", "profiler", *rows, bindir=bindir)
    assert {c: res[c]["status"] for c in rows} == dict.fromkeys(rows, "skip")
    assert "rocprofv3 is present" in res["profiler.tool.rocprofv3"]["message"]
    assert "nsys is not in this image either" in res["profiler.tool.nsys"]["message"]
    assert all("needs a GPU" in res[c]["message"] for c in rows)
