"""GPU rows decide from evidence or say they could not: the verdict functions of the rows
whose evidence can be absent, fed with real captures where one exists (the CUDA wheel's
maps after ``import torch``, tests/fixtures/cuda-wheel) and with torch's own words
(pytorch/pytorch aten/src/ATen/Context.cpp) where the GPU path cannot run here."""

import json
from pathlib import Path

import pytest

from valorch_probe.checks.features_backends import determinism_verdict
from valorch_probe.checks.features_cuda import rtc_verdict
from valorch_probe.checks.features_rocm_libs import ck_refusal
from valorch_probe.context import Fail, Partial, Report, Skip

CAPTURE = Path(__file__).parents[1] / "fixtures" / "cuda-wheel" / "torch-2.6.0-cu124-import.json"


def test_nvrtc_mapped_at_import_in_the_real_cuda_wheel_makes_lazy_loading_not_measurable():
    maps = json.loads(CAPTURE.read_text())["maps_after_import"]
    nvrtc = ";".join(p for p in maps if "nvrtc" in p or "hiprtc" in p)
    assert nvrtc, "the capture maps NVRTC at import torch"
    lines = {"IMPORT": nvrtc, "BEFORE": nvrtc, "AFTER": nvrtc, "VALUE": "10.0"}
    with pytest.raises(Partial) as got:
        rtc_verdict(lines)
    assert "lazy loading is not measurable" in got.value.message
    assert "at import torch" in got.value.message and "libnvrtc.so.12" in got.value.message
    lazy = rtc_verdict({"IMPORT": "", "BEFORE": "", "AFTER": nvrtc, "VALUE": "10.0"})
    assert isinstance(lazy, Report) and "on first JIT use" in lazy.message


@pytest.mark.parametrize(
    ("on", "off", "outcome"), [(True, False, None), (True, True, Skip), (False, False, Fail)]
)
def test_deterministic_flag_passes_only_when_turning_it_off_makes_passes_differ(on, off, outcome):
    if outcome is None:
        assert isinstance(determinism_verdict({True: on, False: off}, 1e-6), Report)
        return
    with pytest.raises(outcome) as got:
        determinism_verdict({True: on, False: off}, 1e-6)
    if outcome is Skip:
        assert got.value.message.startswith("not measurable: ")


class Refusing:
    """torch.backends.cuda.preferred_blas_library as two releases answer CK on an arch outside
    Context::ckSupported(): a TORCH_CHECK (2.7 on), or a warning and the backend kept (2.5)."""

    def __init__(self, raises):
        self.raises, self.now = raises, "_BlasBackend.Cublas"

    def __call__(self, backend=None):
        import warnings

        if backend is None:
            return self.now
        if self.raises:
            raise RuntimeError(
                "Cannot set preferred blas backend to CK since following conditions are not "
                "true: architecture supported for CK: 0, PyTorch built with CK GEMM support: 1"
            )
        warnings.warn(
            "Attempting to use CK on an unsupported architecture! Cannot set backend to CK",
            stacklevel=2,
        )
        return self.now


@pytest.mark.parametrize("raises", [True, False])
def test_torch_refusing_ck_is_named_in_its_own_words(raises):
    said = ck_refusal(Refusing(raises))
    assert ("architecture supported for CK: 0" in said) == raises
    assert ("unsupported architecture" in said) != raises
    accepted = Refusing(False)
    accepted.now = "_BlasBackend.Ck"
    assert ck_refusal(accepted) == ""
