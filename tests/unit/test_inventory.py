"""Inventory gatherer (against fixture file trees) and the pure audit functions."""

from __future__ import annotations

import ast
import io
import json
import re
from contextlib import redirect_stdout
from pathlib import Path

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from pydantic import ValidationError

from orchestrator import audit
from orchestrator.render import audit as render_audit
from tests import sbom_helpers
from valorch_probe import MARKER, inventory
from valorch_probe.inventory_parse import (
    MAX_TEXT,
    MAX_VALUE,
    component,
    parse_dpkg_status,
    parse_header_version,
    parse_ofed_info,
    parse_ompi_info,
    parse_torch_config,
    parse_ucx_info,
    split_rocm_version,
    upstream_version,
)

ROOT = Path(__file__).resolve().parents[2]
FIX = ROOT / "tests" / "fixtures" / "inventory"
FAKE_ROCM = ROOT / "images" / "docker" / "fake-rocm"


def by_name(inv: dict) -> dict:
    return {c["name"]: c for c in inv["components"]}


@pytest.fixture(scope="module")
def rocm() -> dict:
    return inventory.gather(str(FIX / "rocm-root"))


@pytest.fixture(scope="module")
def cuda() -> dict:
    return inventory.gather(str(FIX / "cuda-root"))


# ------------------------------------------------------------- parsers ---


@pytest.mark.parametrize(
    "version, library, rocm, distro",
    [
        ("0.10.0.60300-1~24.04", "0.10.0", "6.3.0", "24.04"),
        ("2.3.0.60300-39~22.04", "2.3.0", "6.3.0", "22.04"),
        ("6.3.60300-39~20.04", "6.3", "6.3.0", "20.04"),
        ("1.0.0.60300-39~22.04", "1.0.0", "6.3.0", "22.04"),
        ("6.3.42131.60300-39~24.04", "6.3.42131", "6.3.0", "24.04"),
        ("3.2.0.60204-139~22.04", "3.2.0", "6.2.4", "22.04"),
        ("5.7.1.50701-98~22.04", "5.7.1", "5.7.1", "22.04"),
    ],
)
def test_split_rocm_version(version, library, rocm, distro):
    split = split_rocm_version(version)
    assert split is not None
    assert (split["library"], split["rocm"], split["distro"]) == (library, rocm, distro)


@pytest.mark.parametrize(
    "version",
    [
        "2.36-9+deb12u4",
        "1.24.2-1",
        "4.1.4-3",
        "12.4.127-1",
        "2.21.5-1+cuda12.4",
        "1:2.3.1-1",
        "6.3.0",
        "",
        "abc",
    ],
)
def test_split_rocm_version_leaves_other_versions_alone(version):
    assert split_rocm_version(version) is None


def test_upstream_version():
    assert upstream_version("1:4.1.4-3+b1") == "4.1.4"
    assert upstream_version("0.10.0.60300-39~24.04") == "0.10.0"
    assert upstream_version("1.12.1~rc2-1") == "1.12.1~rc2"
    assert upstream_version("2.0") == "2.0"


def test_parse_dpkg_status_keeps_installed_packages_only():
    text = (FIX / "rocm-root" / "var/lib/dpkg/status").read_text()
    pkgs = {p["Package"]: p for p in parse_dpkg_status(text)}
    assert "rocm-smi-lib" not in pkgs  # deinstall ok config-files
    assert pkgs["hipblaslt"]["Version"] == "0.8.0.60204-139~22.04"  # not the description's text
    assert pkgs["libc6"]["Source"] == "glibc"
    assert len(pkgs) == 7


def test_parse_dpkg_status_of_the_fake_rocm_image_fragment():
    pkgs = {
        p["Package"]: p["Version"]
        for p in parse_dpkg_status((FAKE_ROCM / "dpkg-status.rocm").read_text())
    }
    assert pkgs["hipblaslt"] == "0.10.0.60300-39~24.04"
    assert "rocm-smi-lib" not in pkgs


def test_parse_header_version_macro_styles():
    include = FAKE_ROCM / "root" / "opt" / "rocm-6.3.0" / "include"
    assert parse_header_version((include / "hip/hip_version.h").read_text(), "hip") == "6.3.42131"
    assert parse_header_version((include / "miopen/version.h").read_text(), "miopen") == "3.3.0"
    assert (
        parse_header_version((include / "hipblas/hipblas-version.h").read_text(), "hipblas")
        == "2.3.0"
    )
    assert parse_header_version((include / "rccl/rccl.h").read_text(), "nccl") == "2.21.5"
    assert (
        parse_header_version((FIX / "cuda-root/usr/include/cudnn_version.h").read_text(), "cudnn")
        == "9.1.0"
    )
    magma = FAKE_ROCM / "root/opt/rocm-6.3.0/magma/include/magma_types.h"
    assert parse_header_version(magma.read_text(), "magma") == "2.9.0"
    # the @PROJECT_VERSION_MAJOR@ template of an #if 0 block is not a version
    hipfft = FIX / "rocm-root/opt/rocm-6.2.4/include/hipfft/hipfft-version.h"
    assert parse_header_version(hipfft.read_text(), "hipfft") == "1.0.15"
    assert parse_header_version("#define FOO_MAJOR 1\n", "foo") is None


def test_parse_torch_config():
    rocm = parse_torch_config((FIX / "torch-config-rocm.txt").read_text())
    assert rocm == {"hip": "6.3.42131", "miopen": "3.2.0", "magma": "2.7.2", "torch": "2.4.0"}
    cuda = parse_torch_config((FIX / "torch-config-cuda.txt").read_text())
    assert cuda["cuda"] == "12.1" and cuda["cudnn"] == "8.9.2" and cuda["magma"] == "2.6.1"


def test_parse_tool_output():
    assert parse_ucx_info("# UCT version=1.10.0 revision 7477e81\n") == "1.10.0"
    assert parse_ucx_info("# Library version: 1.15.0\n# Library path: /x\n") == "1.15.0"
    assert (
        parse_ompi_info("package:Open MPI x\nompi:version:full:4.1.5\nopal:version:full:4.1.5\n")
        == "4.1.5"
    )
    assert parse_ompi_info("mpirun (Open MPI) 4.0.7\n\nReport bugs to x\n") == "4.0.7"
    assert parse_ofed_info("MLNX_OFED_LINUX-5.3-1.0.5.0:\n") == "5.3-1.0.5.0"
    assert parse_ucx_info("command not found") is None


# ------------------------------------------------------------- gather ---


def test_gather_rocm_tree(rocm):
    c = by_name(rocm)
    assert rocm["type"] == "inventory" and rocm["errors"] == []
    assert c["os"]["value"] == "ubuntu 22.04" and c["ubuntu"]["value"] == "22.04"
    assert c["rocm"]["value"] == "6.2.4" and c["rocm"]["source"] == "file"
    assert c["rocm"]["evidence"] == "/opt/rocm/.info/version"
    assert c["rocm"]["extra"]["real_path"] == "/opt/rocm-6.2.4"
    assert "/opt/rocm-6.1.0" in c["rocm"]["extra"]["installs"]
    # headers in their older, flat locations
    assert (c["rocblas"]["value"], c["rocblas"]["evidence"]) == (
        "4.2.4",
        "/opt/rocm/include/rocblas-version.h",
    )
    assert c["hipblaslt"]["value"] == "0.8.0" and c["hipblaslt"]["source"] == "header"
    assert c["hipblaslt"]["extra"]["rocm_build"] == "6.2.4"
    assert c["rccl"]["value"] == "2.20.5" and c["hipfft"]["value"] == "1.0.15"
    # no header: the dpkg entry stands in, split into library and ROCm build
    assert (c["miopen"]["value"], c["miopen"]["source"]) == ("3.2.0", "dpkg")
    deb = c["deb:hipblaslt"]
    assert deb["value"] == "0.8.0.60204-139~22.04"
    assert deb["extra"] == {
        "arch": "amd64",
        "upstream": "0.8.0",
        "rocm_build": "6.2.4",
        "package_build": "139",
        "distro": "22.04",
    }
    assert "deb:rocm-smi-lib" not in c


def test_gather_pip_distributions(rocm):
    c = by_name(rocm)
    assert (
        c["pytorch"]["value"] == "2.4.0+rocm6.2.4"
        and c["pytorch"]["extra"]["package"] == "pip:torch"
    )
    assert c["pip:torch"]["evidence"].startswith(
        "/usr/local/lib/python3.10/dist-packages/torch-2.4.0"
    )
    assert c["apex"]["value"] == "1.4.0" and c["torchvision"]["value"].startswith("0.19.0")
    assert c["tensorboard"]["value"] == "2.13.0" and c["triton"]["value"] == "3.0.0"
    # /usr/local shadows Debian's copy in /usr/lib/python3/dist-packages, as on sys.path
    assert c["numpy"]["value"] == "1.26.4"


def test_gather_runs_tools_found_in_the_tree(rocm):
    c = by_name(rocm)
    assert (c["ucx"]["value"], c["ucx"]["evidence"]) == ("1.10.0", "ucx_info -v")
    assert c["ucx"]["extra"]["package"] == "deb:libucx0"
    # no ompi_info: mpirun --version; the dpkg package disagrees and is kept beside it
    assert (c["ompi"]["value"], c["ompi"]["evidence"]) == ("4.0.7", "mpirun --version")
    assert c["ompi"]["extra"]["package_version"] == "4.1.2-2ubuntu1"
    # no ofed_info: the MLNX_OFED package's version
    assert (c["ofed"]["value"], c["ofed"]["source"]) == ("5.3-1.0.5.1", "dpkg")


def test_gather_without_commands_falls_back_to_dpkg():
    c = by_name(inventory.gather(str(FIX / "rocm-root"), commands=False))
    assert (c["ucx"]["value"], c["ucx"]["source"]) == ("1.12.1~rc2", "dpkg")
    assert c["ompi"]["value"] == "4.1.2"


def test_gather_cuda_tree(cuda):
    c = by_name(cuda)
    assert (c["cuda"]["value"], c["cuda"]["evidence"]) == ("12.4.1", "/usr/local/cuda/version.json")
    # the header wins over the wheel (nvidia-cudnn-cu12 8.9.2.26) and the deb
    assert (c["cudnn"]["value"], c["cudnn"]["source"]) == ("9.1.0", "header")
    assert c["nccl"]["value"] == "2.21.5"
    assert c["tensorflow"]["value"] == "2.16.1" and "pip:tensorflow-cpu" in c
    assert not any(n.startswith("pip:broken") for n in c)  # no Name: skipped
    assert "rocm" not in c


def test_components_are_bounded_and_gpu_facts_stay_out():
    inv = inventory.gather(str(FIX / "rocm-root"))
    for comp in inv["components"]:
        assert set(comp) <= {"name", "value", "source", "evidence", "extra"}
        assert comp["source"] in ("file", "dpkg", "pip", "header", "api", "command")
        assert len(comp["value"]) <= MAX_VALUE
        assert not comp["name"].startswith(("rocminfo", "nvidia-smi", "gpu"))
    assert "kernel" in inv["host_facts"]
    long = component("x", "9" * 5000, "command", "y" * 5000, {"k": "z" * 5000})
    assert len(long["value"]) == MAX_VALUE and long["value"].endswith("...")
    assert len(long["evidence"]) == MAX_TEXT and len(long["extra"]["k"]) == MAX_TEXT


def test_main_prints_one_marker_line():
    out = io.StringIO()
    with redirect_stdout(out):
        assert inventory.main(["--root", str(FIX / "cuda-root"), "--no-commands"]) == 0
    lines = out.getvalue().splitlines()
    assert len(lines) == 1 and lines[0].startswith(MARKER)
    record = json.loads(lines[0][len(MARKER) :])
    assert set(record) == {"type", "components", "host_facts", "errors"}
    assert audit.parse_inventory(record).get("cuda").value == "12.4.1"


@pytest.mark.parametrize("module", ["inventory.py", "inventory_parse.py"])
def test_probe_modules_are_python38_stdlib(module):
    source = (ROOT / "valorch_probe" / module).read_text()
    tree = ast.parse(source, feature_version=(3, 8))  # no match statements, no 3.9+ syntax
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            assert node.level == 1 or not (node.module or "").startswith("orchestrator")
        if isinstance(node, ast.Import):
            assert not any(a.name.startswith("orchestrator") for a in node.names)
        assert not (
            isinstance(node, ast.Attribute) and node.attr in ("removeprefix", "removesuffix")
        )


# -------------------------------------------------- compiled-against ---


def _comps(**values):
    return [
        {"name": k.replace("__", "."), "value": v, "source": "api", "evidence": "x"}
        for k, v in values.items()
    ]


def test_build_findings():
    comps = _comps(
        miopen="3.3.0",
        hip="6.3.42131",
        cudnn="8.9.2",
        cuda="12.4.1",
        pytorch__built_with__miopen="3.2.0",
        pytorch__built_with__hip="6.3.42131",
        pytorch__built_with__cudnn="8.9",
        pytorch__built_with__cuda="12.1",
        pytorch__built_with__magma="2.7.2",
    )
    found = {
        f.component: f for f in audit.build_findings(audit.parse_inventory({"components": comps}))
    }
    assert set(found) == {"miopen", "cuda"}  # cudnn 8.9 agrees with 8.9.2; no magma installed
    assert found["miopen"].expected == "3.2.0" and found["miopen"].found == "3.3.0"
    assert found["miopen"].kind == "build-mismatch"
    assert "3.2.0" in found["miopen"].message and "3.3.0" in found["miopen"].message


# ------------------------------------------------------------ audit ---


@pytest.fixture(scope="module")
def rocm_inv(rocm) -> audit.Inventory:
    return audit.parse_inventory(rocm)


def test_parse_inventory_validates_untrusted_json(rocm):
    good = {
        "type": "inventory",
        "components": [{"name": "x", "value": "1", "source": "pip", "evidence": "e"}],
        "host_facts": {},
        "errors": [],
    }
    assert audit.parse_inventory(good).get("x").value == "1"
    bad_comp = [{"name": "x", "value": "1", "source": "pip", "evidence": "e", "shell": "rm -rf /"}]
    for broken in (
        {**good, "components": bad_comp},
        {**good, "components": [{**good["components"][0], "source": "guess"}]},
        {**good, "components": [{**good["components"][0], "value": "9" * 10_000}]},
        {**good, "components": good["components"] * 2},
        {**good, "unexpected": 1},
    ):
        with pytest.raises(ValidationError):
            audit.parse_inventory(broken)
    with pytest.raises(ValueError):
        audit.parse_inventory({"type": "result"})
    with pytest.raises(ValueError):
        audit.parse_inventory([1, 2])
    comp = audit.parse_inventory(rocm).components[0]
    with pytest.raises(ValidationError):
        comp.value = "2"  # frozen


@pytest.mark.parametrize(
    "expected, found, ok",
    [
        ("3.12", "3.12.8", True),
        ("3.1", "3.12.8", False),
        ("2.4.0", "2.4.0+rocm6.2.4", True),
        ("2.4.0", "2.4.0a0+git1", True),
        ("2.4", "2.3.0", False),
        ("5.3-1.0.5.0", "5.3-1.0.5.0", True),
        ("5.3-1.0.5.0", "5.3-2.0.0.0", False),
        ("24.04", "24.04", True),
        ("12", "12.7", True),
        ("v4.0.7", "4.0.7", True),
        ("1.10.0", "1.10", False),
    ],
)
def test_version_matches(expected, found, ok):
    assert audit.version_matches(expected, found) is ok


def test_compare_prefix_master_missing_and_drift(rocm_inv):
    expected = {
        "pytorch": "2.4.0",
        "ubuntu": "22.04",
        "python": "3",
        "apex": "1.4.0",
        "torchvision": "0.19.0",
        "tensorboard": "2.13.0",
        "magma": "master",
        "ucx": "1.14.1",
        "ompi": "4.0.7",
        "ofed": "5.3-1.0.5.0",
        "rocm": "6.2",
    }
    findings = {f.component: f for f in audit.compare(rocm_inv, expected)}
    assert [f.component for f in audit.compare(rocm_inv, expected)][: len(expected)] == list(
        expected
    )
    assert findings["pytorch"].kind == "ok" and findings["rocm"].kind == "ok"
    assert findings["magma"].kind == "missing" and findings["magma"].drift  # master, but absent
    assert findings["ucx"].kind == "drift" and findings["ucx"].found == "1.10.0"
    assert findings["ucx"].evidence == "ucx_info -v"
    assert findings["ofed"].kind == "drift"  # 5.3-1.0.5.1 is not 5.3-1.0.5.0
    assert audit.has_drift(list(findings.values()))
    assert audit.exit_code(list(findings.values())) == 1


def test_compare_master_is_unpinned_not_drift():
    inv = audit.parse_inventory(inventory.gather(str(FIX / "rocm-root")))
    found = audit.compare(inv, {"rocm": "master", "pytorch": "2.4", "deb:libc6": "2.35"})
    assert [f.kind for f in found] == ["unpinned", "ok", "ok"]
    assert found[0].found == "6.2.4"
    assert audit.exit_code(found, inv) == 0
    assert audit.compare(inv, {"libc6": "2.35"})[0].kind == "ok"  # a bare key finds deb:libc6


def test_compare_reports_build_mismatch_without_gating(rocm_inv):
    comps = [c.model_dump() for c in rocm_inv.components]
    comps.append(
        {
            "name": "pytorch.built_with.miopen",
            "value": "3.3.0",
            "source": "api",
            "evidence": "torch._C._show_config()",
            "extra": {},
        }
    )
    inv = audit.parse_inventory({"type": "inventory", "components": comps})
    findings = audit.compare(inv, {"pytorch": "2.4"})
    mismatch = [f for f in findings if f.kind == "build-mismatch"]
    assert len(mismatch) == 1 and mismatch[0].component == "miopen" and not mismatch[0].drift
    assert audit.exit_code(findings) == 0
    md = render_audit.render_findings_md(findings, "img")
    assert "Compiled against vs installed" in md and "3.3.0" in md


def test_diff(rocm_inv):
    cuda_inv = audit.parse_inventory(inventory.gather(str(FIX / "cuda-root")))
    changes = audit.diff(rocm_inv, cuda_inv)
    kinds = {c.subject: c for c in changes}
    assert kinds["pytorch"].kind == "changed" and (kinds["pytorch"].old, kinds["pytorch"].new) == (
        "2.4.0+rocm6.2.4",
        "2.3.0",
    )
    assert kinds["rocm"].kind == "removed" and kinds["cuda"].kind == "added"
    assert "python" not in kinds and "os" not in kinds  # equal
    names = [c.subject for c in changes]
    first_pkg = next(i for i, n in enumerate(names) if ":" in n)
    assert all(":" not in n for n in names[:first_pkg]) and all(":" in n for n in names[first_pkg:])
    assert all(":" not in c.subject for c in audit.diff(rocm_inv, cuda_inv, packages=False))
    assert audit.diff(rocm_inv, rocm_inv) == []
    md = render_audit.render_diff_md(changes, "rocm", "cuda")
    assert "| pytorch | 2.4.0+rocm6.2.4 | 2.3.0 | changed |" in md and "## Packages" in md
    assert "No differences." in render_audit.render_diff_md([], "a", "b")
    doc = json.loads(render_audit.render_diff_json(changes, "rocm", "cuda"))
    assert (
        doc["a"] == "rocm"
        and {"kind": "added", "name": "cuda", "old": None, "new": "12.4.1"} in doc["changes"]
    )


def test_cyclonedx_structure(rocm_inv):
    from datetime import datetime, timezone

    from orchestrator.ext.sbom import render as sbom

    when = datetime(2026, 11, 23, 12, 0, tzinfo=timezone.utc)
    ref = "rocm/pytorch:rocm6.2.4_ubuntu22.04_py3.10_pytorch_2.4.0"
    text = sbom.bom_json(rocm_inv, ref, timestamp=when)
    assert sbom_helpers.validate(text) is None  # the CycloneDX 1.5 schema the library ships
    bom = json.loads(text)
    assert bom["bomFormat"] == "CycloneDX" and bom["specVersion"] == "1.5" and bom["version"] == 1
    assert re.fullmatch(
        r"urn:uuid:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",
        bom["serialNumber"],
    )
    assert bom["metadata"]["timestamp"].startswith("2026-11-23T12:00:00")
    assert [t["name"] for t in bom["metadata"]["tools"]["components"]] == ["valorch"]
    meta = bom["metadata"]["component"]
    assert meta == {
        "type": "container",
        "bom-ref": ref,
        "name": "rocm/pytorch",
        "version": "rocm6.2.4_ubuntu22.04_py3.10_pytorch_2.4.0",
    }
    comps = {c["bom-ref"]: c for c in bom["components"]}
    assert len(comps) == len(bom["components"])  # bom-refs are unique
    torch = comps["pkg:pypi/torch@2.4.0%2Brocm6.2.4"]
    assert torch["type"] == "library" and torch["name"] == "torch"
    assert {"name": "valorch:component", "value": "pytorch"} in torch["properties"]
    assert "pkg:deb/ubuntu/hipblaslt@0.8.0.60204-139~22.04?arch=amd64&distro=ubuntu-22.04" in comps
    osc = [c for c in bom["components"] if c["type"] == "operating-system"]
    assert (
        osc == [comps["valorch:os"]] and osc[0]["name"] == "ubuntu" and osc[0]["version"] == "22.04"
    )
    assert comps["valorch:rocm"]["version"] == "6.2.4"  # from a file: a component of its own
    assert comps["valorch:ucx"]["type"] == "application"
    assert {"name": "valorch:evidence", "value": "ucx_info -v"} in comps["valorch:ucx"][
        "properties"
    ]
    for comp in bom["components"]:
        assert comp["type"] in ("library", "operating-system", "application")
    # content-derived serial: the same inventory gives the same BOM, another image another
    assert sbom_helpers.bom(rocm_inv, ref, timestamp=when) == bom
    assert (
        sbom_helpers.bom(rocm_inv, "other:tag", timestamp=when)["serialNumber"]
        != bom["serialNumber"]
    )
    pinned = sbom_helpers.bom(rocm_inv, ref, digest="sha256:" + "0" * 64, timestamp=when)[
        "metadata"
    ]["component"]
    assert (
        pinned["version"] == "sha256:" + "0" * 64
        and pinned["bom-ref"] == "rocm/pytorch@sha256:" + "0" * 64
    )


def test_cyclonedx_licences_and_distro_qualifier():
    from orchestrator.ext.sbom import render as sbom

    inv = audit.parse_inventory(
        {
            "components": [
                {
                    "name": "os",
                    "value": "debian 12",
                    "source": "file",
                    "evidence": "/etc/os-release",
                },
                {
                    "name": "deb:adduser",
                    "value": "3.134",
                    "source": "dpkg",
                    "evidence": "/var/lib/dpkg/status",
                    "extra": {"arch": "all", "license": "GPL-2+"},
                },
                {
                    "name": "deb:libfoo",
                    "value": "1:2.3-1",
                    "source": "dpkg",
                    "evidence": "x",
                    "extra": {"arch": "amd64", "license": "BSD-3-Clause, MIT"},
                },
                {
                    "name": "pip:requests",
                    "value": "2.31.0",
                    "source": "pip",
                    "evidence": "x",
                    "extra": {"license": "Apache-2.0"},
                },
                {
                    "name": "pip:dual",
                    "value": "1",
                    "source": "pip",
                    "evidence": "x",
                    "extra": {"license": "Apache-2.0 OR MIT"},
                },
                {"name": "pip:libstdc++", "value": "2.13.0+cpu", "source": "pip", "evidence": "x"},
            ]
        }
    )
    text = sbom.bom_json(inv, "valorch/test:pip-torch", digest="sha256:" + "1" * 64)
    assert sbom_helpers.validate(text) is None
    comps = {c["name"]: c for c in json.loads(text)["components"]}
    assert comps["adduser"]["purl"] == "pkg:deb/debian/adduser@3.134?arch=all&distro=debian-12"
    assert comps["adduser"]["licenses"] == [{"license": {"name": "GPL-2+"}}]
    assert comps["libfoo"]["licenses"] == [
        {"license": {"id": "BSD-3-Clause"}},
        {"license": {"id": "MIT"}},
    ]
    assert comps["requests"]["licenses"] == [{"license": {"id": "Apache-2.0"}}]
    assert comps["dual"]["licenses"] == [{"expression": "Apache-2.0 OR MIT"}]
    assert (
        comps["libstdc++"]["purl"] == "pkg:pypi/libstdc%2b%2b@2.13.0%2Bcpu"
    )  # packageurl lower-cases pypi names
    assert "licenses" not in comps["libstdc++"]
    assert sbom_helpers.validate(text.replace('"CycloneDX"', '"NotCycloneDX"')) is not None


def test_licence_parsers():
    from email.message import Message

    from valorch_probe.inventory_parse import parse_copyright_licenses, pip_license

    dep5 = (
        "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\n"
        "Upstream-Name: adduser\n\nFiles: *\nCopyright: 1997 Guy Maor\nLicense: GPL-2+\n\n"
        "Files: debian/*\nLicense: GPL-2+\n\nLicense: GPL-2+\n This program is free software\n\n"
        "Files: x\nLicense: BSD-3-clause\n"
    )
    assert parse_copyright_licenses(dep5) == ["GPL-2+", "BSD-3-clause"]
    assert parse_copyright_licenses("This is free-form text.\nLicense: whatever") == []
    meta = Message()
    meta["License"] = "UNKNOWN"
    meta["Classifier"] = "License :: OSI Approved :: BSD License"
    meta["Classifier"] = "Programming Language :: Python"
    assert pip_license(meta) == "BSD License"
    meta["License-Expression"] = "MIT"
    assert pip_license(meta) == "MIT"


def test_the_cudnn_line_of_torch_config_is_decoded_as_pytorch_encodes_it():
    """``CuDNN 90.1`` (CUDA 12.4 wheels) is cudnnGetVersion() 90100 printed cuDNN-8 style
    (CUDAHooks.cpp printCudnnStyleVersion): 9.1.0, wherever the line is read, with or
    without a Build settings line beside it (tests/fixtures/inventory/README.md)."""
    full = parse_torch_config((FIX / "torch-config-cu124-cudnn9.txt").read_text())
    assert full["cudnn"] == "9.1.0" and full["cuda"] == "12.4"
    alone = parse_torch_config((FIX / "torch-config-cu121-cudnn9-lines.txt").read_text())
    assert alone["cudnn"] == "9.1.0" and alone["cuda"] == "12.1"


@given(st.integers(0, 9), st.integers(0, 99), st.integers(0, 99))
def test_cudnn_style_inverts_pytorchs_printer_for_every_cudnn_8_and_9_version(major, minor, patch):
    from valorch_probe.inventory_parse import cudnn_style

    if major >= 9:
        v = 10000 * major + 100 * minor + patch
    else:
        assume(minor <= 9)
        v = 1000 * major + 100 * minor + patch
    printed = "%d.%d" % (v // 1000, v // 100 % 10) + (".%d" % (v % 100) if v % 100 else "")
    assert cudnn_style(printed) == "%d.%d.%d" % (major, minor, patch)
