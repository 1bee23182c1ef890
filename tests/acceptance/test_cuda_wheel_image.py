"""A real CUDA build of PyTorch (valorch/test:pip-torch-cuda: the package index's
torch==2.6.0, a +cu124 build, with NVIDIA's library wheels) on this host, which has no GPU:
run refuses it naming the missing NVIDIA GPU, --cpu-only runs every suite with the GPU rows
skipped and the real build's versions, and the inventory reads each GPU library's version
from the library that import torch mapped, matching the wheel's own metadata."""

import json
import subprocess

import pytest

pytestmark = pytest.mark.docker

IMAGE = "valorch/test:pip-torch-cuda"
ALIAS = "cuda_debian12_py3.11_pytorch_2.6_cu124"
# the suites a GPU-less host runs (selftest plants a crash, a hang and a failure by design)
SUITES = ("smoke", "kernels", "features", "compile", "profiler")


def wheel_versions():
    """The wheels' metadata, read by pip inside the image (not by valorch)."""
    proc = subprocess.run(
        [
            "docker",
            "run",
            "--rm",
            "--network",
            "none",
            IMAGE,
            "python3",
            "-m",
            "pip",
            "list",
            "--format=json",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    return {p["name"]: p["version"] for p in json.loads(proc.stdout)}


def test_run_without_a_gpu_exits_3_naming_the_missing_nvidia_gpu(cli):
    proc = cli("run", "--image", IMAGE)
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert "lacks 1 NVIDIA GPU" in proc.stderr and "--cpu-only" in proc.stderr


def test_inventory_reads_the_loaded_libraries_versions_matching_the_wheels(cli):
    proc = cli("inventory", "audit", "--image", IMAGE, "--json")
    assert proc.returncode == 0, proc.stderr
    found = json.loads(proc.stdout)["components"]
    wheels = wheel_versions()
    wheel_of = {
        "cuda": "nvidia-cuda-runtime-cu12",
        "cudnn": "nvidia-cudnn-cu12",
        "nccl": "nvidia-nccl-cu12",
        "cublas": "nvidia-cublas-cu12",
        "cufft": "nvidia-cufft-cu12",
        "cusparse": "nvidia-cusparse-cu12",
        "nvrtc": "nvidia-cuda-nvrtc-cu12",
    }
    for name, dist in wheel_of.items():
        assert (wheels[dist] + ".").startswith(found[name] + "."), (name, found[name], wheels[dist])
    assert found["cudnn"] == "9.1.0" and found["nccl"] == "2.21.5" and found["cuda"] == "12.4"
    assert found["pytorch.runtime"] == "2.6.0+cu124"
    text = cli("inventory", "audit", "--image", IMAGE).stdout
    assert "cudnnGetVersion() of /usr/local/lib/python3.11/dist-packages/nvidia/cudnn" in text
    assert "not seen loaded" in text  # cuSOLVER: installed, not mapped by import torch


def test_cpu_only_runs_every_suite_with_gpu_rows_skipped_and_the_real_versions(cli):
    args = ["run", "--image", IMAGE, "--cpu-only", "--json"]
    for s in SUITES:
        args += ["--suite", s]
    proc = cli(*args, timeout=1800)
    runs = json.loads(proc.stdout)
    assert {s for run in runs for s in run["timings"]} >= set(SUITES), proc.stderr[-2000:]
    res = {r["check"]: r for run in runs for r in run["results"]}
    assert res["env.facts"]["metrics"]["torch"] == "2.6.0+cu124"
    assert res["env.version.pytorch"]["status"] == "pass"
    assert res["env.build.backend"]["status"] == "pass"
    assert res["features.cuda.jiterator"]["status"] == "skip"  # needs a GPU
    assert res["kernels.all_reduce.gloo"]["status"] == "pass"  # no teardown hang
    tp = res["features.distributed.tensorpipe"]  # init_rpc died for want of numpy: RPC fails here
    assert tp["status"] == "fail" and "TensorPipe RPC died: no numpy" in tp["message"]
    bad = {
        c: r["message"][:200]
        for c, r in res.items()
        if r["status"] in ("fail", "timeout", "crash", "error")
        and c != tp["check"]
        # inductor's C++ backend needs a compiler, which this image (like the CPU one) lacks
        and not (c.startswith("compile.inductor.") and "C/C++ compiler" in r["message"])
    }
    assert bad == {}
    # AMD's tools on a CUDA build do not apply (n/a: the statuses vocabulary carries it)
    amd = [c for c in res if c.startswith(("features.rocm.", "profiler.tool.rocprof"))]
    amd += ["profiler.smi.rocm_smi", "profiler.smi.amd_smi"]
    assert len(amd) == 14, amd  # the ten ROCm library rows, two profilers, two SMI tools
    for c in amd:
        assert res[c]["status"] == "n/a", (c, res[c]["message"])
    assert res["profiler.tool.nsys"]["status"] == "skip"  # NVIDIA's: needs a GPU
