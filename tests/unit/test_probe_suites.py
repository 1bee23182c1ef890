"""The workload suites of the probe (kernels, features, compile, profiler,
tensorflow): the registry's shape, and real outcomes on the host's frameworks
(the probe runs as a subprocess, exactly as inside an image)."""

import ast
import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.unit.test_probe_evidence import GPU_LIBRARIES
from valorch_probe import MARKER
from valorch_probe.loader import catalog

ROOT = Path(__file__).resolve().parents[2]
PROBE = ROOT / "valorch_probe"
KINDS = {
    "environment",
    "kernel",
    "feature",
    "compile",
    "profiler",
    "command",
    "pytest",
    "inventory",
    "selftest",
}
WORKLOAD_SUITES = {"kernels", "features", "compile", "profiler", "tensorflow"}
HAS_TF = importlib.util.find_spec("tensorflow") is not None
needs_torch = pytest.mark.torch  # the probe runs on this interpreter's torch


def run_suite(probe_dir, suite, *checks, env=None, timeout=240):
    args = [sys.executable, "-m", "valorch_probe", "run", "--suite", suite, "--deadline", "120"]
    for c in checks:
        args += ["--check", c]
    full_env = {"PYTHONPATH": str(probe_dir), "PATH": "/usr/bin:/bin", "HOME": str(probe_dir)}
    full_env.update(env or {})
    proc = subprocess.run(
        args, cwd=probe_dir, capture_output=True, text=True, timeout=timeout, env=full_env
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    records = [
        json.loads(line[len(MARKER) :])
        for line in proc.stdout.splitlines()
        if line.startswith(MARKER)
    ]
    return {r["check"]: r for r in records if r["type"] == "result"}


# -- registry ------------------------------------------------------------------------


def test_every_workload_check_is_described():
    cat = catalog()
    suites = {s["name"]: s for s in cat["suites"]}
    assert set(suites) >= WORKLOAD_SUITES
    assert suites["tensorflow"]["framework"] == "tensorflow"
    assert all(suites[s]["framework"] == "torch" for s in WORKLOAD_SUITES - {"tensorflow"})
    checks = [c for c in cat["checks"] if c["suite"] in WORKLOAD_SUITES]
    assert len(checks) >= 100
    prefix = {
        "kernels": "kernels.",
        "features": "features.",
        "compile": "compile.",
        "profiler": "profiler.",
        "tensorflow": "tf.",
    }
    for c in checks:
        assert c["id"].startswith(prefix[c["suite"]]), c["id"]
        assert re.fullmatch(r"[a-z0-9_.]+", c["id"], re.I), c["id"]
        assert c["kind"] in KINDS, c
        assert c["feature"] and c["description"], c["id"]
        assert c["limits"], ("every check says what a pass does not prove", c["id"])
        assert c["version"] in (1, 2, 3, 4)
        if c["unit"] == "s":
            assert c["kind"] in ("kernel", "compile"), c["id"]


def test_kernels_name_their_libraries():
    libs = {c["id"]: c["library"] for c in catalog()["checks"] if c["suite"] == "kernels"}
    want = {
        "kernels.matmul.fp32": "hipBLAS/cuBLAS",
        "kernels.matmul.bf16": "hipBLAS/cuBLAS",
        "kernels.conv2d.fp32": "MIOpen/cuDNN",
        "kernels.conv3d.fp32": "MIOpen/cuDNN",
        "kernels.lstm.fp32": "MIOpen/cuDNN",
        "kernels.fft.c64": "hipFFT/cuFFT",
        "kernels.sort.fp32": "hipCUB/CUB",
        "kernels.randn.stats": "ATen (Philox)",
        "kernels.linalg.svd": "hipSOLVER/cuSOLVER",
        "kernels.sparse.mm": "hipSPARSE/cuSPARSE",
        "kernels.all_reduce.nccl": "RCCL/NCCL",
    }
    for cid, lib in want.items():
        assert libs[cid] == lib
    for cid in (
        "kernels.matmul.fp16",
        "kernels.bmm.fp32",
        "kernels.sdpa.fp32",
        "kernels.topk.fp32",
        "kernels.cumsum.fp32",
        "kernels.linalg.solve",
        "kernels.linalg.eig",
        "kernels.layer_norm.fp32",
        "kernels.softmax.fp32",
        "kernels.all_reduce.gloo",
        "kernels.linear.bf16",
    ):
        assert cid in libs


SEED_DTYPES = [
    "float8_e4m3fn",
    "float8_e5m2",
    "float16",
    "bfloat16",
    "float32",
    "float64",
    "complex32",
    "complex64",
    "complex128",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "int8",
    "int16",
    "int32",
    "int64",
    "bool",
    "quint8",
    "qint8",
    "qint32",
    "quint4x2",
]
SEED_ROWS = [
    "Device management",
    "Tensor operations on GPU",
    "Streams and events",
    "Memory management",
    "Running process lists of memory management",
    "Communication collectives",
    "torch.cuda.CUDAGraph",
    "TunableOp",
    "NVIDIA Tools Extension (NVTX)",
    "Lazy loading NVRTC",
    "Jiterator (beta)",
    "torch.backends.cuda.cufft_plan_cache",
    "torch.backends.cuda.matmul.allow_tf32",
    "torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction",
    "torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction",
    "torch.backends.cuda.enable_cudnn_sdp",
    "torch.backends.cuda.enable_flash_sdp",
    "torch.backends.cuda.enable_mem_efficient_sdp",
    "torch.backends.cuda.enable_math_sdp",
    "torch.backends.cudnn.allow_tf32",
    "torch.backends.cudnn.deterministic",
    "Autocasting",
    "Gradient scaling",
    "CUDA op-specific behavior",
    "TensorPipe",
    "Gloo",
    "torchaudio.transforms.Spectrogram",
    "torchaudio.transforms.MelSpectrogram",
    "torchaudio.transforms.MFCC",
    "torchaudio.transforms.Resample",
    "torchvision.transforms.functional",
    "torchvision.ops",
    "torchvision.models with .to('cuda')",
    "torchvision.io",
    "torch.compiler (AOT Autograd)",
    "torch.compiler (TorchInductor)",
    "torch.compiler (TorchDynamo)",
    "torch.cuda.StreamContext",
    "Dynamic parallelism",
    "Unified memory support in PyTorch",
    "torchtext",
    "torchtune",
    "torchserve",
    "torchrec",
]
# The critical ROCm libraries of rocm-pytorch-compatibility.rst that had no check before
ROCM_LIBRARIES = [
    "Composable Kernel",
    "hipSPARSELt",
    "hipTensor",
    "MIGraphX",
    "MIVisionX",
    "rocAL",
    "rocDecode",
    "RPP",
    "rocThrust",
    "rocWMMA",
]


def test_every_seed_feature_row_has_a_check():
    features = {c["feature"] for c in catalog()["checks"]}
    missing = [
        f
        for f in ["torch." + d for d in SEED_DTYPES] + SEED_ROWS + ROCM_LIBRARIES
        if f not in features
    ]
    assert not missing


def test_gpu_only_rows_declare_it():
    """A row that needs a GPU says so (needs: gpu), and docs/checks.md shows it."""
    checks = {c["id"]: c for c in catalog()["checks"]}
    for cid in (
        "features.cuda.graphs",
        "features.cuda.streams_events",
        "features.cuda.nvtx",
        "features.backends.sdp_flash",
        "features.amp.autocast",
        "features.amp.grad_scaler",
        "features.torchvision.io",
        "features.torchvision.models",
        "features.torchaudio.spectrogram",
        "kernels.all_reduce.nccl",
        "features.cuda.collectives",
        "profiler.tool.rocprofv3",
        "profiler.smi.nvidia_smi",
        "features.cuda.stream_context",
    ):
        assert "gpu" in checks[cid]["needs"], cid
    for cid in ("kernels.matmul.fp32", "features.dtype.uint16", "features.distributed.gloo"):
        assert "gpu" not in checks[cid]["needs"], cid


@pytest.mark.skipif(
    not hasattr(sys, "stdlib_module_names"),
    reason="reads the sources against sys.stdlib_module_names (Python 3.10+): the same on any interpreter",
)
def test_probe_sources_stay_python38_stdlib_and_argv_only():
    for path in sorted((PROBE / "checks").glob("*.py")):
        src = path.read_text()
        ast.parse(src, str(path), feature_version=(3, 8))
        assert "shell=True" not in src, path
        assert not re.search(r"^\s*(from|import) orchestrator", src, re.M), path
        for name in ("removeprefix", "removesuffix"):
            assert name not in src, path
        tree = ast.parse(src)
        top = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
        for node in top:  # module-level imports: relative or standard library only
            mods = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
            )
            if isinstance(node, ast.ImportFrom) and node.level:
                continue
            for m in mods:
                assert m.split(".")[0] in sys.stdlib_module_names, (path.name, m)


def test_missing_feature_classification():
    from valorch_probe.checks._common import attempt, missing_feature
    from valorch_probe.context import Unsupported

    assert missing_feature(NotImplementedError("x"))
    assert missing_feature(RuntimeError("\"addmm_impl_cpu_\" not implemented for 'Half'"))
    assert missing_feature(RuntimeError("No available kernel. Aborting execution."))
    assert not missing_feature(RuntimeError("CUDA error: an illegal memory access was encountered"))
    with pytest.raises(Unsupported):
        attempt("op", lambda: (_ for _ in ()).throw(NotImplementedError("nope")))
    with pytest.raises(ValueError):
        attempt("op", lambda: (_ for _ in ()).throw(ValueError("wrong answer")))
    assert attempt("op", lambda: 3) == 3


# -- real runs on the host's torch ----------------------------------------------------


@needs_torch
def test_kernels_suite_on_host_torch(probe_dir):
    res = run_suite(
        probe_dir,
        "kernels",
        "kernels.matmul.*",
        "kernels.conv2d.fp32",
        "kernels.fft.c64",
        "kernels.sort.fp32",
        "kernels.randn.stats",
        "kernels.linalg.svd",
        "kernels.sparse.mm",
        "kernels.all_reduce.*",
    )
    assert len(res) == 11
    statuses = {cid: r["status"] for cid, r in res.items()}
    assert not [cid for cid, s in statuses.items() if s not in ("pass", "skip", "unsupported")], (
        statuses
    )
    mm = res["kernels.matmul.fp32"]
    assert mm["status"] == "pass" and mm["unit"] == "s" and len(mm["samples"]) >= 10
    assert all(s > 0 for s in mm["samples"])
    assert 0 <= mm["metrics"]["rel_error"] < mm["metrics"]["tolerance"]
    for cid in (
        "kernels.conv2d.fp32",
        "kernels.fft.c64",
        "kernels.linalg.svd",
        "kernels.sparse.mm",
        "kernels.sort.fp32",
        "kernels.randn.stats",
        "kernels.all_reduce.gloo",
    ):
        assert statuses[cid] == "pass", res[cid]["message"]
        assert len(res[cid]["samples"]) >= 10
    import torch

    if not torch.cuda.is_available():
        assert statuses["kernels.all_reduce.nccl"] == "skip"
        assert res["kernels.matmul.fp32"]["metrics"]["device"] == "cpu"
        for (
            cid,
            r,
        ) in res.items():  # every result says where it ran; no CPU result names a GPU library
            assert r["device"] == "cpu", cid
            assert not any(g in (r["library"] or "") for g in GPU_LIBRARIES), (cid, r["library"])
        # the CPU library is evidence: MKL's verbose line for this wheel's SGEMM, oneDNN for its convolution
        assert mm["library"] == "MKL" and "SGEMM" in mm["metrics"]["library_evidence"]
    gloo = res["kernels.all_reduce.gloo"]
    assert gloo["metrics"]["world_size"] == 2 and gloo["library"] == "Gloo"


@needs_torch
def test_features_dtypes_and_missing_packages(probe_dir):
    import torch

    res = run_suite(
        probe_dir,
        "features",
        "features.dtype.*",
        "features.torchvision.*",
        "features.torchaudio.resample",
        "features.cuda.graphs",
        "features.amp.autocast",
        "features.distributed.gloo",
        "features.backends.sdp_flash",
    )
    for name in SEED_DTYPES:
        r = res["features.dtype." + name]
        if hasattr(torch, name):
            assert r["status"] in ("pass", "partial", "unsupported"), (name, r["message"])
        else:
            assert r["status"] == "unsupported" and "no dtype" in r["message"]
        if r["status"] == "partial":  # partial names what failed, and only a sub-operation can fail
            assert (
                r["message"].startswith("partial support: ") and "not implemented: " in r["message"]
            )
            assert r["metrics"]["not_implemented"] and "multiply" in r["metrics"]["worked"]
    for name in ("float32", "bfloat16", "int64", "bool", "qint8"):
        assert res["features.dtype." + name]["status"] == "pass", res["features.dtype." + name][
            "message"
        ]
    if hasattr(torch, "uint16"):  # eager uint16 has no add on the CPU: partial, naming add
        assert res["features.dtype.uint16"]["status"] == "partial"
        assert "add" in res["features.dtype.uint16"]["metrics"]["not_implemented"]
    for pkg, prefix in (
        ("torchvision", "features.torchvision."),
        ("torchaudio", "features.torchaudio."),
    ):
        if importlib.util.find_spec(pkg) is None:
            for cid, r in res.items():
                if cid.startswith(prefix):
                    assert r["status"] == "unsupported" and "not importable" in r["message"], cid
    assert res["features.distributed.gloo"]["status"] == "pass"
    assert res["features.distributed.gloo"]["metrics"]["world_size"] == 2
    if not torch.cuda.is_available():  # GPU-only rows never pass on the CPU
        for cid in ("features.cuda.graphs", "features.backends.sdp_flash", "features.amp.autocast"):
            assert res[cid]["status"] == "skip" and "needs a GPU" in res[cid]["message"], cid


@needs_torch
def test_compile_aot_eager_and_export(probe_dir):
    import torch

    res = run_suite(probe_dir, "compile", "compile.aot_eager.mlp", "compile.export")
    if not hasattr(torch, "compile"):
        assert res["compile.aot_eager.mlp"]["status"] == "unsupported"
        return
    r = res["compile.aot_eager.mlp"]
    assert r["status"] == "pass", r["message"]
    assert r["metrics"]["compile_s"] > 0 and len(r["samples"]) >= 10
    assert r["metrics"]["rel_error_vs_eager"] <= r["metrics"]["tolerance"]
    assert res["compile.export"]["status"] == (
        "pass" if hasattr(torch, "export") else "unsupported"
    )


@needs_torch
def test_profiler_torch_and_external_tools(probe_dir, tmp_path):
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "rocprofv3").write_text("#!/bin/sh\necho 'rocprofv3 version 0.6.0-rc1'\n")
    (fake / "nvidia-smi").write_text(
        "#!/bin/sh\necho 'could not communicate with the NVIDIA driver'\nexit 9\n"
    )
    (fake / "ncu").write_text("#!/bin/sh\necho 'no version here'\n")
    for f in fake.iterdir():
        f.chmod(0o755)
    res = run_suite(probe_dir, "profiler", env={"PATH": "%s:/usr/bin:/bin" % fake})
    assert res["profiler.torch_profiler.cpu_ops"]["status"] == "pass"
    assert res["profiler.torch_profiler.memory"]["status"] == "pass"
    assert res["profiler.torch_profiler.chrome_trace"]["status"] == "pass"
    import torch

    if not torch.cuda.is_available():
        # the GPU is tested before the tool: present or absent, a tool row without a GPU is a skip
        # (never unsupported on a CPU host), and the skip says whether the image has the tool
        for cid in (
            "profiler.tool.rocprofv3",
            "profiler.tool.ncu",
            "profiler.smi.nvidia_smi",
            "profiler.torch_profiler.device_kernels",
            "profiler.tool.nsys",
            "profiler.smi.rocm_smi",
        ):
            assert res[cid]["status"] == "skip", (cid, res[cid]["message"])
        assert (
            "rocprofv3 is present (%s)" % (fake / "rocprofv3")
            in res["profiler.tool.rocprofv3"]["message"]
        )
        assert "nsys is not in this image either" in res["profiler.tool.nsys"]["message"]


@pytest.mark.skipif(not HAS_TF, reason="the host python has no tensorflow")
def test_tensorflow_suite(probe_dir):
    res = run_suite(probe_dir, "tensorflow", env={"TF_CPP_MIN_LOG_LEVEL": "2"})
    assert {cid: r["status"] for cid, r in res.items()} == {
        "tf.devices": "pass",
        "tf.matmul.fp32": "pass",
        "tf.conv2d.fp32": "pass",
        "tf.mixed_precision.policy": "pass",
        "tf.xla.jit_compile": "pass",
    }, res
    xla = res["tf.xla.jit_compile"]
    assert xla["metrics"]["compile_s"] > 0 and len(xla["samples"]) >= 10


def test_suites_without_framework_report_unsupported(probe_dir, tmp_path):
    """An image without torch (the import raises ModuleNotFoundError for torch itself):
    every check reports unsupported, never a crash or a fail."""
    shadow = tmp_path / "shadow"
    shadow.mkdir()
    for mod in ("torch", "tensorflow"):
        (shadow / (mod + ".py")).write_text(
            "raise ModuleNotFoundError(%r, name=%r)\n" % ("No module named '%s'" % mod, mod)
        )
    env = {"PYTHONPATH": "%s:%s" % (shadow, probe_dir)}
    for suite in ("kernels", "compile", "tensorflow"):
        res = run_suite(probe_dir, suite, env=env)
        assert res and {r["status"] for r in res.values()} == {"unsupported"}, suite


def test_installed_but_broken_framework_fails_with_evidence(probe_dir, tmp_path):
    """A torch that is installed but cannot load (a shared library with an undefined
    symbol) makes every check fail with the evidence, never unsupported."""
    shadow = tmp_path / "shadow"
    shadow.mkdir()
    (shadow / "torch.py").write_text(
        "raise OSError('/usr/lib/libtorch_cpu.so: undefined symbol: _ZN3c1010TensorImpl')\n"
    )
    res = run_suite(
        probe_dir, "kernels", "kernels.matmul.*", env={"PYTHONPATH": "%s:%s" % (shadow, probe_dir)}
    )
    assert len(res) == 3
    for r in res.values():
        assert r["status"] == "fail" and "installed but fails to import" in r["message"], r
        assert "undefined symbol" in r["message"]
