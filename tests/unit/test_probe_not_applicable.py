"""A probe check that raises NotApplicable (another vendor's tool) reports ``n/a``, and the
orchestrator's protocol validation accepts it as a result."""

from orchestrator.spec import CheckResult
from valorch_probe.context import Context, NotApplicable
from valorch_probe.registry import Check
from valorch_probe.runner import run_check


def test_a_check_that_does_not_apply_reports_not_applicable_and_is_accepted():
    def body(ctx):
        raise NotApplicable("rocm-smi is AMD's tool; this image is built for NVIDIA")

    chk = Check("profiler.smi.rocm_smi", body, "rocm-smi", "profiler", "profiler")
    result = run_check(chk, Context(device="cpu"), 1)
    assert result["status"] == "n/a" and "AMD's tool" in result["message"]
    accepted = CheckResult.model_validate(
        {k: v for k, v in result.items() if k in CheckResult.model_fields}
    )
    assert accepted.status == "n/a"
