"""Every parser that reads a CUDA build's own output, against the real output of one:
PyTorch 2.6.0+cu124 from the package index, captured in valorch/test:pip-torch-cuda
(tests/fixtures/cuda-wheel/README.md names how)."""

import json
from pathlib import Path

from valorch_probe import evidence, inventory, loaded_libs
from valorch_probe.inventory_parse import parse_torch_config

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "cuda-wheel"
IMPORT = json.loads((FIX / "torch-2.6.0-cu124-import.json").read_text())
FACTS = json.loads((FIX / "inventory-torch-facts.json").read_text())
WHEELS = {p["name"]: p["version"] for p in json.loads((FIX / "pip-list.json").read_text())}


def test_show_config_build_settings_give_the_compiled_against_versions():
    for text in (IMPORT["config_show"], IMPORT["show_config"], FACTS["config"]):
        assert parse_torch_config(text) == {"cuda": "12.4", "cudnn": "9.1.0", "torch": "2.6.0"}
    cfg = IMPORT["config_show"]
    assert evidence.build_setting(cfg, "CUDA_VERSION") == "12.4"
    assert evidence.build_setting(cfg, "USE_ROCM") == "OFF"
    assert evidence.cpu_library_from_config(cfg, "blas") == "MKL"
    assert evidence.cpu_library_from_config(cfg, "lapack") == "MKL"


def test_cudnn_and_nccl_version_calls_decode_to_the_wheels_versions():
    # torch.backends.cudnn.version() is cuDNN 9's CUDNN_VERSION (10000*major + 100*minor + patch)
    assert IMPORT["cudnn_version"] == 90100
    assert loaded_libs.decode("cudnn", [IMPORT["cudnn_version"]]) == "9.1.0"
    assert WHEELS["nvidia-cudnn-cu12"].startswith("9.1.0")
    assert ".".join(map(str, IMPORT["nccl_version"])) == WHEELS["nvidia-nccl-cu12"] == "2.21.5"


def test_the_statically_linked_mkl_is_not_named_from_the_mapped_objects():
    # the wheel links MKL into libtorch_cpu: no libmkl_* is mapped, the build settings name it
    maps = "\n".join(IMPORT["maps_after_import"])
    assert evidence.cpu_library_from_maps(maps, "blas") is None
    assert "/nvidia/cuda_nvrtc/lib/libnvrtc.so.12" in maps  # preloaded at import torch


def test_every_mapped_library_version_matches_its_wheels_metadata():
    found = loaded_libs.versions(FACTS["loaded"])
    wheel = {
        "cuda": "nvidia-cuda-runtime-cu12",
        "cudnn": "nvidia-cudnn-cu12",
        "nccl": "nvidia-nccl-cu12",
        "cublas": "nvidia-cublas-cu12",
        "cublaslt": "nvidia-cublas-cu12",
        "cufft": "nvidia-cufft-cu12",
        "cusparse": "nvidia-cusparse-cu12",
        "curand": "nvidia-curand-cu12",
        "nvrtc": "nvidia-cuda-nvrtc-cu12",
    }
    assert set(found) == set(wheel)
    for name, dist in wheel.items():
        assert (WHEELS[dist] + ".").startswith(found[name]["version"] + "."), (name, found[name])
        assert found[name]["path"].startswith("/usr/local/lib/python3.11/dist-packages/nvidia/")
    assert found["cuda"]["version"] == "12.4" and found["cudnn"]["version"] == "9.1.0"
    assert found["nccl"]["version"] == "2.21.5" and found["cublas"]["version"] == "12.4.5"
    assert found["cufft"]["version"] == "11.2.1" and found["cusparse"]["version"] == "12.3.1"
    assert found["nvrtc"]["version"] == "12.4"
    assert "cudnnGetVersion()" in found["cudnn"]["evidence"]


def test_the_gatherer_prefers_loaded_versions_and_marks_metadata_only_libraries():
    g = inventory.Gatherer("/nonexistent", commands=False, torch=False)
    g.add(inventory.component("cudnn", "9.1.0.70", "pip", "nvidia_cudnn_cu12 dist-info"))
    g.add(inventory.component("pip:nvidia-cusolver-cu12", "11.6.1.9", "pip", "dist-info"))
    g.loaded_libraries(FACTS["loaded"])
    g.fallbacks()
    cudnn = g.components["cudnn"]
    assert cudnn["value"] == "9.1.0" and cudnn["source"] == "api"
    assert cudnn["extra"]["installed"] == "9.1.0.70"
    assert g.components["cusolver"]["extra"]["loaded"] == "installed 11.6.1.9, not seen loaded"


def test_the_tracing_library_is_read_from_the_mapped_objects():
    # the CUDA wheel maps libcupti.so.12 at import (nvidia-cuda-cupti-cu12)
    maps = "\n".join(IMPORT["maps_after_import"])
    lib, how = evidence.tracing_library(maps, "nvidia", IMPORT["config_show"])
    assert lib == "CUPTI" and "/nvidia/cuda_cupti/lib/libcupti.so.12" in how
    # nothing mapped: the build's Kineto flags decide (-DLIBKINETO_NOROCTRACER on this CUDA build)
    assert evidence.tracing_library("", "nvidia", IMPORT["config_show"])[0] == "CUPTI"
    assert evidence.tracing_library("", "amd", "-DLIBKINETO_NOCUPTI")[0] == "roctracer"
    rocm = "7f0 r-xp 0 0:1 2 /opt/rocm-6.4.0/lib/librocprofiler-sdk.so.1.0.0"
    assert evidence.tracing_library(rocm, "amd")[0] == "rocprofiler-sdk"
