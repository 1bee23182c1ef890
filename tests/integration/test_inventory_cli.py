"""valorch inventory audit | diff | show against the real test images (real engine)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from root_helpers import ensure_fake_rocm

from tests import sbom_helpers

ROOT = Path(__file__).resolve().parents[2]
VALORCH = str(Path(sys.executable).with_name("valorch"))


def valorch(*args: str, db: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("VALORCH_DB", "VALORCH_CATALOG")}
    return subprocess.run(
        [VALORCH, *args, "--db", str(db)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=900,
        env=env,
    )


@pytest.fixture(scope="module")
def db(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("inv") / "valorch.sqlite"


@pytest.fixture(scope="module")
def catalog(tmp_path_factory) -> Path:
    """Deliberate expectations: a wrong PyTorch for pip-torch, a ROCm 6.3 stack for fake-rocm."""
    ensure_fake_rocm()
    d = tmp_path_factory.mktemp("catalog")
    (d / "t.yaml").write_text(
        "family: t\nbackend: cpu\nlocal: true\nimages:\n"
        "  - alias: wrong_torch\n    reference: valorch/test:pip-torch\n"
        '    components: {debian: "12", python: "3.11", pytorch: "2.4"}\n'
        "  - alias: fake_rocm6.3\n    reference: valorch/test:fake-rocm\n    backend: rocm\n"
        '    components: {rocm: "6.3", hip: "6.3", hipblaslt: "0.10", miopen: "3.3.0", rccl: "2.21",\n'
        '                 magma: master, ucx: "1.14.1", ompi: "4.1.5", ofed: "5.3-1.0.5.0", debian: "12"}\n'
        '  - alias: absent\n    reference: valorch/test:does-not-exist\n    components: {python: "3.11"}\n'
    )
    return d


@pytest.fixture(scope="module")
def pip_audit(db) -> dict:
    proc = valorch(
        "inventory", "audit", "--image", "cpu_debian12_py3.11_pytorch_2.13", "--json", db=db
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return json.loads(proc.stdout)


def test_audit_clean_image_reports_real_values(pip_audit):
    found = {f["component"]: f for f in pip_audit["findings"]}
    assert found["debian"]["kind"] == "ok" and found["debian"]["found"].startswith("12.")
    assert found["python"]["kind"] == "ok" and found["python"]["found"].startswith("3.11.")
    assert found["pytorch"]["kind"] == "ok" and found["pytorch"]["found"].startswith("2.13.0")
    assert found["pytorch"]["evidence"].endswith(".dist-info")
    assert pip_audit["exit_code"] == 0 and pip_audit["drift"] is False
    assert pip_audit["digest"].startswith("sha256:") and pip_audit["packages"] > 50


def test_stored_inventory_is_retrievable_by_run_id(pip_audit, db):
    proc = valorch("inventory", "show", pip_audit["run"], "--json", db=db)
    assert proc.returncode == 0, proc.stderr
    shown = json.loads(proc.stdout)
    assert shown["run"] == pip_audit["run"] and shown["reference"] == "valorch/test:pip-torch"
    values = {c["name"]: c["value"] for c in shown["components"]}
    assert values["pytorch"] == pip_audit["components"]["pytorch"]
    assert sum(":" in n for n in values) == pip_audit["packages"]


def test_stored_inventory_is_retrievable_by_image_as_diff_takes_it(pip_audit, db):
    """``inventory show`` takes what ``inventory diff`` takes: an image's alias (or tag)
    shows its newest stored inventory."""
    for name in (pip_audit["image"], pip_audit["reference"]):
        proc = valorch("inventory", "show", name, "--json", db=db)
        assert proc.returncode == 0, proc.stderr
        assert json.loads(proc.stdout)["run"] == pip_audit["run"]


def test_cyclonedx_export(pip_audit, db):
    proc = valorch("inventory", "show", pip_audit["run"][:8], "--format", "cyclonedx", db=db)
    assert proc.returncode == 0, proc.stderr
    bom = json.loads(proc.stdout)
    assert bom["bomFormat"] == "CycloneDX" and bom["specVersion"] == "1.5"
    purls = [c.get("purl", "") for c in bom["components"]]
    assert any(p.startswith("pkg:pypi/torch@2.13.0") for p in purls), purls[:20]
    assert bom["metadata"]["component"]["name"] == "valorch/test"
    assert (
        bom["metadata"]["component"]["version"] == pip_audit["digest"]
    )  # the image digest is the subject
    assert (
        bom["metadata"]["timestamp"]
        and bom["metadata"]["tools"]["components"][0]["name"] == "valorch"
    )

    assert sbom_helpers.validate(proc.stdout) is None


def test_wrong_expectation_is_drift_exit_1(catalog, db):
    proc = valorch(
        "inventory", "audit", "--image", "wrong_torch", "--catalog", str(catalog), "--json", db=db
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    found = {f["component"]: f for f in json.loads(proc.stdout)["findings"]}
    assert found["pytorch"]["kind"] == "drift"
    assert found["pytorch"]["expected"] == "2.4" and found["pytorch"]["found"].startswith("2.13.0")
    assert found["python"]["kind"] == "ok"


def test_wrong_expectation_in_the_terminal_table(catalog, db):
    proc = valorch(
        "inventory",
        "audit",
        "--image",
        "wrong_torch",
        "--catalog",
        str(catalog),
        "--format",
        "md",
        db=db,
    )
    assert proc.returncode == 1
    assert "| pytorch | 2.4 | 2.13.0" in proc.stdout and "**DRIFT**" in proc.stdout


@pytest.fixture(scope="module")
def rocm_audit(catalog, db) -> dict:
    proc = valorch(
        "inventory", "audit", "--image", "fake_rocm6.3", "--catalog", str(catalog), "--json", db=db
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return json.loads(proc.stdout)


def test_fake_rocm_against_its_rocm_stack_is_clean(rocm_audit):
    found = {f["component"]: f for f in rocm_audit["findings"]}
    assert {k: f["kind"] for k, f in found.items()} == {
        "rocm": "ok",
        "hip": "ok",
        "hipblaslt": "ok",
        "miopen": "ok",
        "rccl": "ok",
        "magma": "unpinned",
        "ucx": "ok",
        "ompi": "ok",
        "ofed": "ok",
        "debian": "ok",
    }
    assert found["hipblaslt"]["evidence"].endswith("hipblaslt-version.h")
    assert found["ucx"]["evidence"] == "ucx_info -v"


def test_diff_of_two_images(db):
    proc = valorch(
        "inventory",
        "diff",
        "cpu_debian12_py3.11_pytorch_1.13",
        "cpu_debian12_py3.11_pytorch_2.13",
        "--format",
        "json",
        db=db,
    )
    assert proc.returncode == 0, proc.stderr
    changes = {c["name"]: c for c in json.loads(proc.stdout)["changes"]}
    assert changes["pytorch"]["kind"] == "changed"
    assert changes["pytorch"]["old"].startswith("1.13") and changes["pytorch"]["new"].startswith(
        "2.13.0"
    )
    assert "python" not in changes  # both Debian bookworm's 3.11
    # the same diff from the stored inventories, without gathering again
    stored = valorch(
        "inventory",
        "diff",
        "cpu_debian12_py3.11_pytorch_1.13",
        "cpu_debian12_py3.11_pytorch_2.13",
        "--stored",
        "--format",
        "json",
        db=db,
    )
    assert stored.returncode == 0, stored.stderr
    assert {c["name"]: c for c in json.loads(stored.stdout)["changes"]}["pytorch"] == changes[
        "pytorch"
    ]
    # without --stored, an inventory of the same image digest is reused: no new inventory runs
    before = json.loads(valorch("inventory", "list", "--json", db=db).stdout)
    again = valorch(
        "inventory",
        "diff",
        "cpu_debian12_py3.11_pytorch_1.13",
        "cpu_debian12_py3.11_pytorch_2.13",
        "--format",
        "json",
        db=db,
    )
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["changes"] == json.loads(proc.stdout)["changes"]
    assert json.loads(valorch("inventory", "list", "--json", db=db).stdout) == before


def test_diff_by_run_ids_in_the_terminal(pip_audit, rocm_audit, db):
    runs = json.loads(valorch("inventory", "list", "--json", db=db).stdout)
    assert {pip_audit["run"], rocm_audit["run"]} <= {r["run"] for r in runs}
    proc = valorch("inventory", "diff", pip_audit["run"], rocm_audit["run"], db=db)
    assert proc.returncode == 0, proc.stderr
    assert "pytorch" in proc.stdout and "removed" in proc.stdout and "rocm" in proc.stdout


def test_bad_input_and_infrastructure_exit_codes(catalog, db):
    unknown = valorch("inventory", "audit", "--image", "no_such_image", db=db)
    assert (
        unknown.returncode == 2
        and "unknown image" in unknown.stderr
        and "Traceback" not in unknown.stderr
    )
    absent = valorch("inventory", "audit", "--image", "absent", "--catalog", str(catalog), db=db)
    assert (
        absent.returncode == 3
        and "not present" in absent.stderr
        and "Traceback" not in absent.stderr
    )
    missing_run = valorch("inventory", "show", "ffffffff", db=db)
    assert missing_run.returncode == 2 and "no stored inventory" in missing_run.stderr
    assert "inventory audit --image ffffffff" in missing_run.stderr


def _inventory_containers() -> set[str]:
    out = subprocess.run(
        ["docker", "ps", "-aq", "--filter", "label=org.valorch.suite=inventory"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return set(out.split())


def test_no_container_left_behind():
    """An audit removes its container. Another worker's audit may be running right now,
    with a container of the same label: each container seen must be gone within a
    minute (an audit's own deadline); one left behind stays and fails."""
    seen = _inventory_containers()
    deadline = time.monotonic() + 60
    while seen and time.monotonic() < deadline:
        time.sleep(1)
        seen &= _inventory_containers()
    assert seen == set()
