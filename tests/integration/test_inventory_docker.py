"""The inventory probe inside the real test images (plain `docker run`, no network).

valorch/test:fake-rocm is built here from images/docker/Dockerfile.fake-rocm when
it is missing (a few seconds: it only copies files onto valorch/base:bookworm).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from root_helpers import FAKE_ROCM, ensure_fake_rocm

from orchestrator import audit
from orchestrator.render import audit as render_audit
from tests import sbom_helpers
from valorch_probe import MARKER

pytestmark = pytest.mark.docker

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def fake_rocm_image() -> str:
    return ensure_fake_rocm()


@pytest.fixture(scope="module")
def probe_copy(tmp_path_factory) -> Path:
    import shutil

    dest = tmp_path_factory.mktemp("probe")
    shutil.copytree(
        ROOT / "valorch_probe",
        dest / "valorch_probe",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    return dest


def run_inventory(image: str, probe: Path) -> tuple[dict, audit.Inventory]:
    proc = subprocess.run(
        [
            "docker",
            "run",
            "--rm",
            "--network",
            "none",
            "-v",
            f"{probe}:/opt/valorch:ro",
            "-e",
            "PYTHONPATH=/opt/valorch",
            image,
            "python3",
            "-m",
            "valorch_probe.inventory",
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    lines = [line for line in proc.stdout.splitlines() if line.startswith(MARKER)]
    assert len(lines) == 1, proc.stdout[-2000:]
    raw = json.loads(lines[0][len(MARKER) :])
    inv = audit.parse_inventory(raw)
    assert inv.errors == (), inv.errors
    return raw, inv


@pytest.fixture(scope="module")
def inventories(probe_copy, fake_rocm_image) -> dict[str, audit.Inventory]:
    images = [
        "valorch/test:debian-torch",
        "valorch/test:pip-torch",
        "valorch/base:bullseye",
        fake_rocm_image,
    ]
    return {image: run_inventory(image, probe_copy)[1] for image in images}


def value(inv: audit.Inventory, name: str) -> str:
    comp = inv.get(name)
    assert comp is not None, (
        f"{name} not in the inventory: {[c.name for c in inv.components if ':' not in c.name]}"
    )
    return comp.value


def test_debian_torch(inventories):
    inv = inventories["valorch/test:debian-torch"]
    assert value(inv, "debian").startswith("12")
    assert value(inv, "os") == "debian 12"
    assert value(inv, "python").startswith("3.11.")
    assert value(inv, "pytorch").startswith("1.13.")
    assert inv.get("pytorch").evidence.startswith("/usr/lib/python3/dist-packages/torch-1.13")
    assert value(inv, "pytorch.runtime").startswith(
        "1.13."
    )  # import torch agrees with the metadata
    assert value(inv, "numpy")
    assert value(inv, "deb:python3-torch").startswith("1.13.")  # Debian's package of it
    assert inv.get("rocm") is None and inv.get("cuda") is None
    assert "kernel" in inv.host_facts


def test_pip_torch(inventories):
    inv = inventories["valorch/test:pip-torch"]
    assert value(inv, "pytorch").startswith("2.13.0")
    assert inv.get("pytorch").evidence.startswith(
        "/usr/local/lib/python3.11/dist-packages/torch-2.13.0"
    )
    assert value(inv, "pytorch.runtime").startswith("2.13.0")
    assert inv.get("pytorch.cuda") is None and inv.get("pytorch.hip") is None  # a CPU wheel
    assert value(inv, "numpy")


def test_bullseye(inventories):
    inv = inventories["valorch/base:bullseye"]
    assert value(inv, "python").startswith("3.9.")
    assert value(inv, "debian").startswith("11")
    assert inv.get("pytorch") is None
    found = audit.compare(inv, {"python": "3.9", "debian": "11", "pytorch": "1.13"})
    assert [f.kind for f in found] == ["ok", "ok", "missing"]


def test_fake_rocm(inventories):
    inv = inventories[FAKE_ROCM]
    rocm = inv.get("rocm")
    assert (rocm.value, rocm.source, rocm.evidence) == ("6.3.0", "file", "/opt/rocm/.info/version")
    assert (
        rocm.extra["package_version"] == "6.3.0-39" and rocm.extra["real_path"] == "/opt/rocm-6.3.0"
    )
    assert rocm.extra["header"] == "6.3.0"
    deb = inv.get("deb:hipblaslt")
    assert deb.value == "0.10.0.60300-39~24.04"
    assert (deb.extra["upstream"], deb.extra["rocm_build"], deb.extra["distro"]) == (
        "0.10.0",
        "6.3.0",
        "24.04",
    )
    hipblaslt = inv.get("hipblaslt")
    assert (hipblaslt.value, hipblaslt.source) == ("0.10.0", "header")
    assert hipblaslt.extra["rocm_build"] == "6.3.0"
    assert value(inv, "hip") == "6.3.42131" and value(inv, "miopen") == "3.3.0"
    assert value(inv, "rocblas") == "4.3.0" and value(inv, "rccl") == "2.21.5"
    assert value(inv, "rocsolver") == "3.27.0" and inv.get("rocsolver").source == "dpkg"
    assert (value(inv, "ucx"), inv.get("ucx").evidence) == ("1.14.1", "ucx_info -v")
    assert (value(inv, "ompi"), inv.get("ompi").evidence) == ("4.1.5", "ompi_info --parsable")
    assert (value(inv, "ofed"), inv.get("ofed").evidence) == ("5.3-1.0.5.0", "ofed_info -s")
    assert inv.get("deb:rocm-smi-lib") is None  # config-files only
    # the seed table's row for ROCm 6.3 / PyTorch 2.3.0, against an image without PyTorch on Debian
    expected = {
        "pytorch": "2.3.0",
        "ubuntu": "22.04",
        "python": "3.10",
        "magma": "master",
        "ucx": "1.14.1",
        "ompi": "4.1.5",
        "ofed": "5.3-1.0.5.0",
        "rocm": "6.3",
    }
    kinds = {f.component: f.kind for f in audit.compare(inv, expected)}
    assert kinds == {
        "pytorch": "missing",
        "ubuntu": "missing",
        "python": "drift",
        "magma": "unpinned",
        "ucx": "ok",
        "ompi": "ok",
        "ofed": "ok",
        "rocm": "ok",
    }


def test_diff_debian_torch_vs_pip_torch(inventories):
    a, b = inventories["valorch/test:debian-torch"], inventories["valorch/test:pip-torch"]
    changes = {c.subject: c for c in audit.diff(a, b)}
    assert changes["pytorch"].kind == "changed"
    assert changes["pytorch"].old.startswith("1.13.") and changes["pytorch"].new.startswith(
        "2.13.0"
    )
    assert changes["deb:python3-torch"].kind == "removed"
    assert "python" not in changes and "os" not in changes
    md = render_audit.render_diff_md(list(changes.values()), "debian-torch", "pip-torch")
    assert "| pytorch |" in md


def test_cyclonedx_of_a_real_image(inventories):
    from orchestrator.ext.sbom import render as sbom

    text = sbom.bom_json(inventories["valorch/test:pip-torch"], "valorch/test:pip-torch")
    assert sbom_helpers.validate(text) is None
    bom = json.loads(text)
    purls = {c.get("purl") for c in bom["components"]}
    torch = next(p for p in purls if p and p.startswith("pkg:pypi/torch@2.13.0"))
    assert torch and any(
        p and p.startswith("pkg:deb/debian/libc6@") and "distro=debian-12" in p for p in purls
    )
    adduser = next(c for c in bom["components"] if c["name"] == "adduser")
    assert (
        adduser["purl"].endswith("?arch=all&distro=debian-12") and adduser["licenses"]
    )  # from its copyright file
    assert any(
        c.get("licenses") for c in bom["components"] if c.get("purl", "").startswith("pkg:pypi/")
    )
