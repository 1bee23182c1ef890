"""A GPU row on a CPU image does not apply to it: whatever the probe said of it (skip: no
GPU; unsupported: torch has no cuda.tunable), the executor records ``n/a``; on a GPU image
the same result is kept as it is (the row applies, this host could not run it)."""

from hypothesis import given
from hypothesis import strategies as st

from orchestrator.executors.transcript import not_applicable
from orchestrator.spec import STATUSES, CheckInfo, CheckResult, HostSpec, ImageSpec, SuiteRef, Task

CHECKS = (
    CheckInfo(id="features.cuda.tunableop", feature="TunableOp", kind="feature", needs=("gpu",)),
    CheckInfo(id="smoke.matmul.fp32", feature="matmul", kind="kernel"),
)


def task(backend: str) -> Task:
    image = ImageSpec(alias="img", reference="img", backend=backend)
    return Task(
        image=image, suite=SuiteRef(name="features"), host=HostSpec(name="h"), checks=CHECKS
    )


@given(
    st.sampled_from(STATUSES), st.sampled_from(STATUSES), st.sampled_from(["cpu", "rocm", "cuda"])
)
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
