"""A ROCm library row that could only find the library's files reads "present, not
exercised" (partial), never the ✅ of a library that ran; rows whose claim needs a GPU
(Composable Kernel's GEMM, MIGraphX's GPU target, hipSPARSELt's kernels) are skipped
without one. The real probe runs inside the fake ROCm test image, with the recorded ROCm
library tree of tests/fixtures/rocm-libs mounted as a second ROCm root."""

import json
import shutil
import subprocess

import pytest
from gpu_fakes import FIX, ROOT, run_probe

from valorch_probe import MARKER

PRESENCE_ONLY = ("hiptensor", "mivisionx", "rocal", "rocdecode", "rpp", "rocthrust", "rocwmma")


@pytest.mark.docker
def test_presence_only_rows_are_partial_present_not_exercised(tmp_path):
    probe = tmp_path / "probe"
    shutil.copytree(
        ROOT / "valorch_probe",
        probe / "valorch_probe",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    # the recorded tree's headers only: its library files are empty placeholders, which the rows
    # with a host entry point would load (test_rocm_host_entry_points.py: an unloadable file is a fail)
    libs = tmp_path / "rocm"
    shutil.copytree(
        FIX / "rocm-libs" / "opt" / "rocm-6.3.0", libs, ignore=shutil.ignore_patterns("lib")
    )
    argv = [
        "docker",
        "run",
        "--rm",
        "--network",
        "none",
        "--read-only",
        "--tmpfs",
        "/tmp",
        "-v",
        f"{probe}:/opt/valorch:ro",
        "-v",
        f"{libs}:/opt/rocm-6.4.0:ro",
        "-w",
        "/opt/valorch",
        "-e",
        "PYTHONPATH=/opt/valorch",
        "-e",
        "PYTHONDONTWRITEBYTECODE=1",
        "valorch/test:fake-rocm",
        "python3",
        "-m",
        "valorch_probe",
        "run",
        "--suite",
        "features",
        "--check",
        "features.rocm.*",
        "--expect",
        json.dumps({"backend": "rocm"}),
        "--device",
        "cpu",
    ]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    res = {
        r["check"]: r
        for r in (
            json.loads(ln[len(MARKER) :])
            for ln in proc.stdout.splitlines()
            if ln.startswith(MARKER)
        )
        if r["type"] == "result"
    }
    found = [c for c in PRESENCE_ONLY if res["features.rocm." + c]["status"] != "unsupported"]
    assert {"hiptensor", "rpp", "rocwmma"} <= set(found)  # what the recorded tree holds
    for c in found:
        r = res["features.rocm." + c]
        assert r["status"] == "partial" and "present, not exercised" in r["message"], (
            c,
            r["message"],
        )
        assert r["metrics"]["proven"] == "presence"
    assert "1.4.0" in res["features.rocm.hiptensor"]["message"]
    assert all(r["status"] != "pass" for r in res.values()), {
        c: r["status"] for c, r in res.items()
    }
    # CK's header is there, but its row claims a GEMM on CK kernels: not a pass without torch and a GPU
    ck = res["features.rocm.composable_kernel"]
    assert ck["status"] == "skip" and "needs a GPU" in ck["message"] and "1.1.0" in ck["message"]


def test_hipsparselt_row_is_not_evidenced_by_a_cuda_build(tmp_path):
    """On an H100 torch's 2:4 sparsity would run cuSPARSELt / CUTLASS: the hipSPARSELt row is
    never a pass there; the probe finds no hipSPARSELt, and the row, declared for AMD GPUs, is
    n/a on a CUDA image (the orchestrator's one rule, executors/transcript.py)."""
    from orchestrator.checks_manifest import info, manifest
    from orchestrator.executors.transcript import not_applicable
    from orchestrator.spec import CheckInfo, CheckResult, HostSpec, ImageSpec, SuiteRef, Task

    res = run_probe(
        tmp_path, "cuda-h100", "features", "features.rocm.hipsparselt", expect={"backend": "cuda"}
    )
    r = res["features.rocm.hipsparselt"]
    assert r["status"] == "unsupported" and "not in this image" in r["message"]
    check = CheckInfo(**info(manifest().checks["features.rocm.hipsparselt"]))
    task = Task(
        image=ImageSpec(alias="img", reference="img", backend="cuda"),
        suite=SuiteRef(name="features"),
        host=HostSpec(name="h"),
        checks=(check,),
    )
    result = CheckResult(check=check.id, status=r["status"], message=r["message"])
    (decided,) = not_applicable([result], task)
    assert decided.status == "n/a" and decided.message.startswith("not applicable: a ROCm row")
