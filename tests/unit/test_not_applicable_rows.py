"""Rows that do not apply to an image are ``n/a``, decided by one rule
(executors/transcript.py ``inapplicable``): a row declared for one vendor's GPUs (its needs
name ``amd`` or ``nvidia``) on any other image, whatever the probe said but the harness's own
failures; a GPU row on a CPU image that was not run (skip, unsupported). On a GPU image a GPU
row the host could not run keeps its ``skip``: the row applies, this host could not run it."""

import re

from hypothesis import given
from hypothesis import strategies as st

from orchestrator.checks_manifest import info, manifest
from orchestrator.executors.transcript import not_applicable
from orchestrator.spec import STATUSES, CheckInfo, CheckResult, HostSpec, ImageSpec, SuiteRef, Task

CHECKS = (
    CheckInfo(id="features.cuda.tunableop", feature="TunableOp", kind="feature", needs=("gpu",)),
    CheckInfo(id="smoke.matmul.fp32", feature="matmul", kind="kernel"),
)
BACKENDS = ("cpu", "rocm", "cuda")
HARNESS = ("crash", "timeout", "error")


def task(backend: str, checks=CHECKS) -> Task:
    image = ImageSpec(alias="img", reference="img", backend=backend)
    return Task(
        image=image, suite=SuiteRef(name="features"), host=HostSpec(name="h"), checks=checks
    )


@given(st.sampled_from(STATUSES), st.sampled_from(STATUSES), st.sampled_from(BACKENDS))
def test_only_gpu_rows_on_cpu_images_that_were_not_run_become_not_applicable(
    gpu_row, cpu_row, backend
):
    results = [
        CheckResult(check="features.cuda.tunableop", status=gpu_row, message="why"),
        CheckResult(check="smoke.matmul.fp32", status=cpu_row),
    ]
    gpu, cpu = not_applicable(results, task(backend))
    assert cpu == results[1]  # a row that needs no GPU is never touched
    if backend == "cpu" and gpu_row in ("skip", "unsupported"):
        assert gpu.status == "n/a" and gpu.message.startswith("not applicable: a GPU row")
        assert gpu.message.endswith(": why") and "((" not in gpu.message
    else:
        assert gpu == results[0]


def test_a_gpu_row_whose_package_is_not_installed_stays_unsupported():
    """Not installed is unsupported on any image (docs/statuses.md), GPU row or not: the probe
    marks it (metrics not_installed) and the row is never made n/a."""
    missing = CheckResult(
        check="features.cuda.tunableop",
        status="unsupported",
        message="torchvision is not importable in this image: not installed (...)",
        metrics={"not_installed": "torchvision"},
    )
    (kept,) = not_applicable([missing], task("cpu"))
    assert kept == missing


# the oracle, independent of the declarations: which rows serve one vendor, by what they name
_AMD = re.compile(r"^features\.rocm\.|^profiler\.(tool\.rocprof|smi\.((rocm|amd)_smi|rocminfo))")
_NVIDIA = re.compile(r"^profiler\.(tool\.(nsys|ncu)|smi\.nvidia_smi)")
_VENDOR_OF = {"rocm": "amd", "cuda": "nvidia", "cpu": None}


def vendor_by_name(check: str):
    return "amd" if _AMD.search(check) else "nvidia" if _NVIDIA.search(check) else None


EVERY_CHECK = tuple(CheckInfo(**info(c)) for c in manifest().checks.values())


def test_every_vendor_row_of_the_manifest_declares_its_vendor_and_no_other_does():
    declared = {
        c.id: next((n for n in c.needs if n in ("amd", "nvidia")), None) for c in EVERY_CHECK
    }
    assert {c: v for c, v in declared.items() if v} == {
        c: vendor_by_name(c) for c in declared if vendor_by_name(c)
    }
    assert sum(1 for v in declared.values() if v == "amd") >= 14  # ten ROCm rows, four tools


def test_every_row_of_another_vendor_is_not_applicable_for_every_check_and_backend():
    """Exhaustive: every check of the manifest, on every backend, with every status."""
    for check in EVERY_CHECK:
        for backend in BACKENDS:
            for status in STATUSES:
                decided(check, backend, status)


def decided(check, backend, status):
    result = CheckResult(check=check.id, status=status, message="the probe's words")
    (got,) = not_applicable([result], task(backend, (check,)))
    vendor = vendor_by_name(check.id)
    other = vendor is not None and vendor != _VENDOR_OF[backend]
    if other and status == "n/a":  # the probe's own n/a (its tool check) is kept as it said
        assert got == result
    elif other and status not in HARNESS:
        assert got.status == "n/a", (check.id, backend, status)
        row = {"amd": "ROCm", "nvidia": "CUDA"}[vendor]
        prefix = "not applicable: a %s row on a %s image" % (row, backend.upper())
        assert got.message.startswith(prefix) and got.message.endswith(": the probe's words")
    elif vendor and vendor == _VENDOR_OF[backend]:  # its own vendor: the verdict stands
        assert got == result
