"""Debian's real ROCm user space (valorch/test:rocm-userspace: HIP, rocBLAS, hipBLASLt, MIOpen,
rocminfo, rocm-smi and amd-smi from Debian unstable's packages, no PyTorch) through the real
CLI on this host, which has no GPU: the inventory reads each library's version from the
library itself with Debian's package version beside it, and `run --cpu-only` of every suite
gives the ROCm tools' rows as skips in the tools' own words, never a failure of the image.
Debian's RCCL needs HIP 5, which cannot sit beside HIP 6 (valorch/test:rocm-rccl, its own
image: images/docker/Dockerfile.rocm-rccl): its row comes from ncclGetVersion() of the real
library, with the package beside it."""

import json
import subprocess

import pytest

from tests.conftest import run_cli

pytestmark = pytest.mark.docker

IMAGE = "valorch/test:rocm-userspace"
RCCL_IMAGE = "valorch/test:rocm-rccl"
SUITES = ("smoke", "kernels", "features", "compile", "profiler")
# library -> (its own answer, the dpkg package beside it, that package's version)
LIBRARIES = {
    "hip": ("6.4.43484", "deb:libamdhip64-6", "6.4.3-5", "hipRuntimeGetVersion()"),
    "rocblas": ("4.4.1", "deb:librocblas4", "6.4.4-4", "rocblas_get_version_string()"),
    "hipblaslt": ("1.1.0", "deb:libhipblaslt1", "7.1.1+dfsg-4", "hipblasLtGetVersion()"),
    "miopen": ("3.4.0", "deb:libmiopen1", "6.4.3+dfsg-1+b1", "miopenGetVersion()"),
}


def audit(image, db):
    """The components `inventory audit` stored for IMAGE, by name."""
    if subprocess.run(["docker", "image", "inspect", image], capture_output=True).returncode:
        pytest.fail(f"test image missing: {image}; run make test-images")
    done = run_cli("inventory", "audit", "--image", image, "--json", db=db)
    assert done.returncode == 0, done.stdout + done.stderr
    stored = run_cli("inventory", "show", json.loads(done.stdout)["run"], "--json", db=db)
    assert stored.returncode == 0, stored.stderr
    return {c["name"]: c for c in json.loads(stored.stdout)["components"]}


@pytest.fixture(scope="module")
def measured(tmp_path_factory):
    """One audit and one run of every suite, shared by the assertions."""
    db = tmp_path_factory.mktemp("rocm") / "valorch.sqlite"
    components = audit(IMAGE, db)
    args = ["run", "--image", IMAGE, "--cpu-only", "--json"]
    for s in SUITES:
        args += ["--suite", s]
    run = run_cli(*args, db=db, timeout=900)
    runs = json.loads(run.stdout)
    return {
        "db": db,
        "components": components,
        "results": {r["check"]: r for one in runs for r in one["results"]},
        "suites": {s for one in runs for s in one["timings"]},
        "stderr": run.stderr,
    }


def test_inventory_reads_each_library_from_itself_with_the_package_beside(measured):
    found = measured["components"]
    for name, (version, package, package_version, call) in LIBRARIES.items():
        comp = found[name]
        assert (comp["value"], comp["source"]) == (version, "api"), comp
        assert comp["evidence"].startswith(call + " of /usr/lib/x86_64-linux-gnu/"), comp
        assert (comp["extra"]["package"], comp["extra"]["package_version"]) == (
            package,
            package_version,
        )
        assert found[package]["value"] == package_version  # the dpkg listing itself
    assert "rccl" not in found and "rocm" not in found  # neither is installed: none made up


def test_rccl_row_is_ncclgetversion_of_the_real_library_with_the_package_beside(tmp_path):
    found = audit(RCCL_IMAGE, tmp_path / "valorch.sqlite")
    rccl = found["rccl"]
    # 21304 in RCCL's (NCCL's) encoding; Debian numbers the package by the ROCm release
    assert (rccl["value"], rccl["source"]) == ("2.13.4", "api"), rccl
    assert rccl["evidence"] == (
        "ncclGetVersion() of /usr/lib/x86_64-linux-gnu/librccl.so.1.0"
        " (loaded by the probe: no framework mapped it)"
    )
    assert (rccl["extra"]["package"], rccl["extra"]["package_version"]) == (
        "deb:librccl1",
        "5.4.3-3+b1",
    )
    assert found["deb:librccl1"]["value"] == "5.4.3-3+b1"  # the dpkg listing itself
    # the HIP 5 it loads, asked the same way, from trixie's package
    assert (found["hip"]["value"], found["hip"]["extra"]["package"]) == (
        "5.7.31921",
        "deb:libamdhip64-5",
    )


def test_every_suite_runs_and_nothing_is_a_failure_of_the_image(measured):
    assert measured["suites"] >= set(SUITES), measured["stderr"][-2000:]
    res = measured["results"]
    bad = {c: r["message"][:200] for c, r in res.items() if r["status"] in ("fail", "error")}
    assert bad == {}
    assert res["env.version.python"]["status"] == "pass"
    # unstable has no VERSION_ID: the os row names what /etc/debian_version says
    assert res["env.version.os"]["status"] == "pass", res["env.version.os"]["message"]
    assert "forky/sid" in res["env.version.os"]["message"]
    # no torch in the image: its rows say so, never a GPU or a CPU pass
    assert res["features.dtype.float16"]["status"] == "unsupported"
    assert "torch is not importable" in res["features.dtype.float16"]["message"]
    for c in ("profiler.smi.nvidia_smi", "profiler.tool.nsys", "profiler.tool.ncu"):
        assert res[c]["status"] == "n/a", (c, res[c]["message"])  # NVIDIA's tools


@pytest.mark.parametrize(
    ("check", "argv", "exit_code", "said"),
    [
        (
            "profiler.smi.rocminfo",
            "rocminfo",
            1,
            "ROCk module is NOT loaded, possibly no GPU devices",
        ),
        (
            "profiler.smi.rocm_smi",
            "rocm-smi --showproductname --json",
            0,
            "Driver not initialized (amdgpu not found in modules)",
        ),
        (
            "profiler.smi.amd_smi",
            "amd-smi static --asic --json",
            255,
            "Drivers not loaded (amdgpu, amd_hsmp, ionic, bnxt_en drivers not found in modules)",
        ),
    ],
)
def test_rocm_tools_run_for_real_and_their_rows_quote_them(measured, check, argv, exit_code, said):
    row = measured["results"][check]
    assert row["status"] == "skip", row
    assert f"{argv} ran: exit {exit_code}, 0 device(s) printed" in row["message"]
    assert said in row["message"] and "needs a GPU" in row["message"]
    assert row["metrics"]["devices"] == 0 and row["metrics"]["returncode"] == exit_code


def test_the_terminal_shows_each_library_version_beside_its_package(measured):
    """Both versions in the table a user reads, not only in --json: the library's own and,
    beside it, the Debian package that installed it (numbered by the ROCm release)."""
    db = measured["db"]
    [listed] = json.loads(run_cli("inventory", "list", "--json", db=db).stdout)[:1]
    shown = run_cli("inventory", "show", listed["run"], db=db, env={"COLUMNS": "300"})
    assert shown.returncode == 0, shown.stderr
    for line in ("4.4.1 (deb:librocblas4 6.4.4-4)", "3.4.0 (deb:libmiopen1 6.4.3+dfsg-1+b1)"):
        assert line in shown.stdout, shown.stdout[-3000:]
