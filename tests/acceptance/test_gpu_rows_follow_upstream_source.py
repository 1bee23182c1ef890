"""Four GPU rows whose verdict PyTorch's own source decides, run by the real probe against a
torch stand-in that behaves as that source says the real one does (tests/fixtures/fake_torch,
each behaviour cited there):
- jiterator on ROCm: the launch raises "Jiterator is not supported on ROCm"
  (aten/src/ATen/cuda/jiterator.h): unsupported, not fail;
- lazy NVRTC: a CUDA wheel that preloads NVRTC at import torch (pytorch/pytorch#145582) passes
  and says so; on ROCm, with no jiterator, it is unsupported, not a crashed child;
- dynamic parallelism: built with nvcc's device-link step, it loads and runs (load_inline with
  -rdc=true cannot: "undefined symbol: __cudaRegisterLinkedBinary_...", pytorch/pytorch#57543);
- matmul.allow_tf32 on ROCm: off by default (the setter is a no-op without
  HIPBLASLT_ALLOW_TF32=1, aten/src/ATen/Context.cpp), available with it, shown in a child."""

import json
import shutil

import pytest
from gpu_fakes import FIX, run_probe

pytest.importorskip("numpy")  # the stand-in's tensors are numpy arrays


def build(tmp_path, base, **changes):
    doc = json.loads((FIX / "fake_torch" / ("%s.json" % base)).read_text())
    doc.update(changes)
    path = tmp_path / ("%s-changed.json" % base)
    path.write_text(json.dumps(doc))
    return path


def rocm27(tmp_path):
    # a ROCm build of PyTorch 2.7, which has the HIPBLASLT_ALLOW_TF32 gate; MI300X has TF32
    return build(tmp_path, "rocm-mi300x", version="2.7.1+rocm6.3", hip="6.3.42131", tf32=True)


def test_jiterator_on_rocm_is_unsupported_naming_what_is_compiled_out(tmp_path):
    res = run_probe(tmp_path, rocm27(tmp_path), "features", "features.cuda.jiterator")
    row = res["features.cuda.jiterator"]
    assert row["status"] == "unsupported", row["message"]
    assert "Jiterator is not supported on ROCm" in row["message"]
    assert "compiled out" in row["message"]


def test_lazy_nvrtc_on_rocm_without_jiterator_is_unsupported_not_a_crashed_child(tmp_path):
    res = run_probe(tmp_path, rocm27(tmp_path), "features", "features.cuda.lazy_nvrtc")
    row = res["features.cuda.lazy_nvrtc"]
    assert row["status"] == "unsupported", row["message"]
    assert "jiterator is compiled out" in row["message"]


@pytest.mark.parametrize(
    ("nvrtc", "loading", "status"),
    [("preloaded", "at import torch", "partial"), ("lazy", "on first JIT use", "pass")],
)
def test_lazy_nvrtc_passes_only_when_the_compiler_loaded_lazily(tmp_path, nvrtc, loading, status):
    """The CUDA wheels since the 2.6 cycle map libnvrtc at import torch (the CUDA image's own
    capture, tests/fixtures/cuda-wheel): the JIT is proven, lazy loading is not measurable there,
    so the row is partial and says so; never "unsupported", never a pass."""
    b = build(tmp_path, "cuda-h100", version="2.6.0+cu124", cuda="12.4", nvrtc=nvrtc)
    row = run_probe(tmp_path, b, "features", "features.cuda.lazy_nvrtc")["features.cuda.lazy_nvrtc"]
    assert row["status"] == status, row["message"]
    assert row["metrics"]["loading"] == loading
    assert "libnvrtc.so.12" in str(row["metrics"]["after"]), row["metrics"]
    assert ("pytorch/pytorch#145582" in row["message"]) == (nvrtc == "preloaded")
    assert ("lazy loading is not measurable" in row["message"]) == (nvrtc == "preloaded")


@pytest.mark.skipif(shutil.which("cc") is None, reason="the nvcc stand-in builds with cc")
def test_dynamic_parallelism_is_built_with_a_device_link_step(tmp_path):
    bindir = tmp_path / "bin"
    bindir.mkdir()
    shutil.copy(FIX / "fake_torch" / "bin" / "nvcc", bindir / "nvcc")
    b = build(tmp_path, "cuda-h100", version="2.6.0+cu124", cuda="12.4")
    res = run_probe(tmp_path, b, "features", "features.cuda.dynamic_parallelism", bindir=bindir)
    row = res["features.cuda.dynamic_parallelism"]
    assert row["status"] == "pass", row["message"]
    assert "1024 device-side child launches wrote 2x+1" in row["message"]


def test_matmul_allow_tf32_on_rocm_is_off_by_default_and_available_with_the_variable(tmp_path):
    res = run_probe(tmp_path, rocm27(tmp_path), "features", "features.backends.matmul_allow_tf32")
    row = res["features.backends.matmul_allow_tf32"]
    assert row["status"] == "pass", row["message"]
    assert "off by default" in row["message"] and "HIPBLASLT_ALLOW_TF32=1" in row["message"]
    assert "verified in a child process" in row["message"]
    assert row["metrics"]["default_off"] is True and row["metrics"]["results_differ"] is True


def test_matmul_allow_tf32_on_cuda_is_judged_in_process(tmp_path):
    b = build(tmp_path, "cuda-h100", version="2.6.0+cu124", cuda="12.4", tf32=True)
    res = run_probe(tmp_path, b, "features", "features.backends.matmul_allow_tf32")
    row = res["features.backends.matmul_allow_tf32"]
    assert row["status"] == "pass", row["message"]
    assert "off by default" not in row["message"] and row["metrics"]["results_differ"] is True


def test_rows_whose_evidence_the_image_cannot_give_are_skipped_as_not_measurable(tmp_path):
    """memory_stats without pynvml (the process list is the row), nvtx without a profiler (a
    range call returns on any build), a reduced-precision flag whose GEMMs are bit-identical
    with it on and off: each is skip "not measurable: …" naming what is missing, never a pass."""
    rows = (
        "features.cuda.memory_stats",
        "features.cuda.nvtx",
        "features.backends.matmul_fp16_reduced",
    )
    res = run_probe(tmp_path, "cuda-h100", "features", *rows)
    mem, nvtx, fp16 = (res[r] for r in rows)
    assert mem["status"] == "skip", mem["message"]
    assert mem["message"].startswith("not measurable: no pynvml in this image")
    assert "running process list" in mem["message"]
    assert nvtx["status"] == "skip", nvtx["message"]
    assert nvtx["message"].startswith("not measurable: no profiler in this image")
    assert fp16["status"] == "skip", fp16["message"]
    assert fp16["message"].startswith("not measurable: allow_fp16_reduced_precision_reduction")
    assert fp16["metrics"]["results_differ"] is False


@pytest.mark.parametrize(("arch", "status"), [("gfx1100", "unsupported"), ("gfx942", None)])
def test_composable_kernel_refused_by_torch_for_this_arch_is_unsupported(tmp_path, arch, status):
    """Context::setBlasPreferredBackend refuses CK outside Context::ckSupported()'s archs
    (aten/src/ATen/Context.cpp): the row is unsupported with torch's words, not a fail."""
    dev = {"name": "AMD GPU", "major": 11, "minor": 0, "gcnArchName": arch + ":xnack-"}
    b = build(tmp_path, "rocm-mi300x", devices=[dev])
    row = run_probe(
        tmp_path, b, "features", "features.rocm.composable_kernel", expect={"backend": "rocm"}
    )
    row = row["features.rocm.composable_kernel"]
    if status:
        assert row["status"] == status, row["message"]
        assert "refuses Composable Kernel on %s" % arch in row["message"]
        assert "architecture supported for CK: 0" in row["message"]
    else:  # accepted: the GEMM runs and its kernels decide (no CK kernel in the stand-in)
        assert "refuses" not in row["message"], row["message"]


def test_a_cuda_wheel_on_a_host_without_a_gpu_is_described_not_failed(tmp_path):
    """The package index's default torch is a CUDA build: on the local interpreter (which no
    catalog declares) with no GPU it is a valid environment; a catalogued cpu image holding
    one is still a mismatch."""
    host = {"backend": "cpu", "host": "1"}
    row = run_probe(
        tmp_path / "host", "cuda-build-no-gpu", "smoke", "env.build.backend", expect=host
    )
    row = row["env.build.backend"]
    assert row["status"] == "pass", row["message"]
    assert "CUDA 12.1 build of torch 2.3.1+cu121" in row["message"] and "no GPU" in row["message"]
    image = run_probe(
        tmp_path / "image",
        "cuda-build-no-gpu",
        "smoke",
        "env.build.backend",
        expect={"backend": "cpu"},
    )["env.build.backend"]
    assert image["status"] == "fail" and "cpu image, but torch is a GPU build" in image["message"]


@pytest.mark.parametrize(("device", "status"), [("cuda", "pass"), ("cpu", "fail")])
def test_gpu_jpeg_decoding_is_judged_by_where_the_tensor_is(tmp_path, device, status):
    """A decode that answers on the CPU is correct and yet not GPU decoding: the row says so."""
    b = build(tmp_path, "cuda-h100", jpeg_decode_device=device)
    row = run_probe(tmp_path, b, "features", "features.torchvision.io")["features.torchvision.io"]
    assert row["status"] == status, row["message"]
    if status == "fail":
        assert 'decode_jpeg(device="cuda") returned a tensor on cpu' in row["message"]
