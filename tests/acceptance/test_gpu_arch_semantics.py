"""The GPU arch the probe reports follows PyTorch's real bindings on both kinds of build
(pytorch/pytorch torch/csrc/cuda/Module.cpp: on a CUDA build ``gcnArchName`` is the device
*name*; on ROCm it is "gfx942:sramecc+:xnack-" and major/minor are 9, 4 on an MI300X).
Before the fix an H100 read as arch "NVIDIA H100 80GB HBM3": coverage "missing",
env.build.backend failed, every failure got a false "no code for this GPU's arch"
suffix, profiler.smi.nvidia_smi compared sm_90 with the name, the label repeated the name."""

import json

from gpu_fakes import FIX, run_probe, tool_printing

SMOKE = ("env.facts", "env.build.backend", "smoke.device", "env.version.cuda")


def test_h100_cuda_build_reads_sm_90_not_the_device_name(tmp_path):
    res = run_probe(
        tmp_path, "cuda-h100", "smoke", *SMOKE, expect={"backend": "cuda", "cuda": "12.4"}
    )
    backend = res["env.build.backend"]
    assert backend["status"] == "pass", backend["message"]
    m = backend["metrics"]
    assert (
        m["gpu_archs"] == "sm_90" and m["arch_coverage"] == "sm_90:native" and not m["arch_missing"]
    )
    assert res["env.facts"]["metrics"]["device_arch"] == "sm_90"
    assert res["smoke.device"]["device"] == "cuda:0 NVIDIA H100 80GB HBM3 sm_90"
    # a genuine failure keeps its message, with no false "no code for this GPU's arch" suffix
    cuda = res["env.version.cuda"]
    assert cuda["status"] == "fail" and "expected 12.4, found 12.1" in cuda["message"]
    assert "no code for this GPU" not in cuda["message"]


def test_cuda_build_without_the_arch_still_fails_for_it(tmp_path):
    build = json.loads((FIX / "fake_torch" / "cuda-h100.json").read_text())
    build["arch_list"] = ["sm_50", "sm_60", "sm_70", "sm_75", "sm_80"]  # a cu11x-era list: no sm_90
    custom = tmp_path / "old-cu.json"
    custom.write_text(json.dumps(build))
    res = run_probe(tmp_path, custom, "smoke", "env.build.backend", expect={"backend": "cuda"})
    backend = res["env.build.backend"]
    assert backend["status"] == "fail" and "no code for this host's sm_90" in backend["message"]
    assert backend["metrics"]["arch_coverage"] == "sm_90:missing"


def test_mi300x_rocm_build_reads_gfx942_from_gcn_arch_name(tmp_path):
    res = run_probe(
        tmp_path,
        "rocm-mi300x",
        "smoke",
        "env.facts",
        "env.build.backend",
        "smoke.device",
        expect={"backend": "rocm"},
    )
    backend = res["env.build.backend"]
    assert backend["status"] == "pass", backend["message"]
    assert (
        backend["metrics"]["gpu_archs"] == "gfx942"
        and backend["metrics"]["arch_coverage"] == "gfx942:native"
    )
    assert res["smoke.device"]["device"] == "cuda:0 AMD Instinct MI300X gfx942"  # never "sm_94"


def test_nvidia_smi_readback_compares_compute_capability_on_a_real_capture(tmp_path):
    bindir = tmp_path / "bin"
    tool_printing(bindir, "nvidia-smi", FIX / "tools" / "real" / "nvidia-smi-query-gpu-h100x8.csv")
    res = run_probe(tmp_path, "cuda-h100", "profiler", "profiler.smi.nvidia_smi", bindir=bindir)
    smi = res["profiler.smi.nvidia_smi"]
    assert smi["status"] == "pass", smi["message"]
    assert smi["metrics"]["torch_arch"] == "sm_90" and smi["metrics"]["devices"] == 8


def test_rocm_build_without_gcn_arch_name_reports_the_arch_unknown_never_sm(tmp_path):
    """An older ROCm torch binds no gcnArchName: major/minor (9, 4) are not a compute capability,
    so the arch is "unknown" and coverage is not judged (no false "missing")."""
    build = json.loads((FIX / "fake_torch" / "rocm-mi300x.json").read_text())
    del build["devices"][0]["gcnArchName"]
    custom = tmp_path / "old-rocm.json"
    custom.write_text(json.dumps(build))
    res = run_probe(
        tmp_path, custom, "smoke", "env.build.backend", "smoke.device", expect={"backend": "rocm"}
    )
    m = res["env.build.backend"]["metrics"]
    assert (
        m["gpu_archs"] == "unknown"
        and m["arch_coverage"] == "unknown:unknown"
        and not m["arch_missing"]
    )
    assert res["smoke.device"]["device"] == "cuda:0 AMD Instinct MI300X" and "sm_94" not in str(res)
