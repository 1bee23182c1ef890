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
    ("nvrtc", "loading"), [("preloaded", "at import torch"), ("lazy", "on first JIT use")]
)
def test_lazy_nvrtc_says_when_the_compiler_loaded_and_passes_either_way(tmp_path, nvrtc, loading):
    """The CUDA wheels since the 2.6 cycle map libnvrtc at import torch: a design choice that the
    row reports, never "unsupported"."""
    b = build(tmp_path, "cuda-h100", version="2.6.0+cu124", cuda="12.4", nvrtc=nvrtc)
    row = run_probe(tmp_path, b, "features", "features.cuda.lazy_nvrtc")["features.cuda.lazy_nvrtc"]
    assert row["status"] == "pass", row["message"]
    assert row["metrics"]["loading"] == loading
    assert "libnvrtc.so.12" in str(row["metrics"]["after"]), row["metrics"]
    assert ("pytorch/pytorch#145582" in row["message"]) == (nvrtc == "preloaded")


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


def test_rows_that_need_a_missing_package_judge_the_feature_and_name_what_is_missing(tmp_path):
    """memory_stats without pynvml, nvtx without a profiler: the allocator and the range calls
    are what is judged; the part the image cannot show is named, not held against the feature."""
    res = run_probe(
        tmp_path, "cuda-h100", "features", "features.cuda.memory_stats", "features.cuda.nvtx"
    )
    mem, nvtx = res["features.cuda.memory_stats"], res["features.cuda.nvtx"]
    assert mem["status"] == "pass", mem["message"]
    assert "not measurable in this image: no pynvml" in mem["message"]
    assert nvtx["status"] == "pass", nvtx["message"]
    assert "not measurable in this image: no profiler" in nvtx["message"]


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
