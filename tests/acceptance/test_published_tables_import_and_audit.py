"""The pages release engineers publish, read as a new user would: every framework page of
ROCm's compatibility docs family at its newest version imports with a report (images,
backend, ROCm version, unread cells); the release-wide library table and PyTorch's release
matrix import beside the catalog; inventory audit shows an image's measured versions
against them (agreement, drift, libraries the image lacks, combinations PyTorch did not
publish); bad pages and tables are exit 2 naming file, line and what was expected."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "tests" / "fixtures" / "rocm-docs"
CSV = DOCS / "compatibility-matrix-historical-6.0.csv"
RELEASE_MD = ROOT / "tests" / "fixtures" / "pytorch-release" / "RELEASE.aa6104e2.md"
# a later RELEASE.md, with the C++ and Stable ROCm columns (its README: source and commit)
RELEASE_MD_ROCM = ROOT / "tests" / "fixtures" / "pytorch-release" / "RELEASE.e2da267b.md"

# every framework page of the family at its newest version found (tests/fixtures/rocm-docs/
# README.md; where the stores give no date, the version with the latest images and layout):
# images, ROCm versions, and the cells the report lists as not read
NEWEST = {
    "pytorch-compatibility.ab38960bb4.rst": (8, {"6.3.3"}, 0),
    "tensorflow-compatibility.bc07746f3d.rst": (5, {"6.3.3"}, 0),
    "jax-compatibility.9176c9d5a3.rst": (5, {"6.3.1", "6.2.4"}, 0),
    "dgl-compatibility.fff7efbd.rst": (8, {"7.0.0", "6.4.3", "6.4.0"}, 0),
    "megablocks-compatibility.5716ecec.rst": (1, {"6.3.0"}, 0),
    "taichi-compatibility.3da4a377.rst": (1, {"6.3.2"}, 0),
    "ray-compatibility.a98d6a57.rst": (2, {"7.0.0", "6.4.1"}, 0),
    "llama-cpp-compatibility.9c958afd.rst": (27, {"7.0.0", "6.4.3", "6.4.2", "6.4.1", "6.4.0"}, 1),
    "stanford-megatron-lm-compatibility.f3e2badb.rst": (1, {"6.3.0"}, 0),
    "verl-compatibility.bb619f34.rst": (2, {"7.0.0", "6.2.0"}, 0),
    "flashinfer-compatibility.d3a4db97.rst": (2, {"7.1.1", "6.4.1"}, 0),
}


@pytest.mark.parametrize("page", sorted(NEWEST))
def test_newest_family_page_imports_with_its_report(cli, tmp_path, page):
    count, rocm, unread = NEWEST[page]
    out = tmp_path / "images" / "family.yaml"
    proc = cli("images", "import-rst", str(DOCS / "pages" / page), "--out", str(out), "--json")
    assert proc.returncode == 0, proc.stderr[-2000:]
    report = json.loads(proc.stdout)["import"]
    assert len(report["images"]) == count and report["backends"] == ["rocm"]
    assert {i["rocm"] for i in report["images"]} == rocm
    assert len(report["unread"]) == unread  # llama.cpp: a 65-character digest in a link
    listed = cli("images", "list", "--catalog", str(tmp_path / "images"), "--json")
    assert listed.returncode == 0, listed.stderr[-2000:]
    images = [i for i in json.loads(listed.stdout) if i["alias"] != "host"]
    assert len(images) == count and {i["backend"] for i in images} == {"rocm"}
    term = cli("images", "import-rst", str(DOCS / "pages" / page), "--out", str(out))
    assert term.returncode == 0
    assert ("unread cells: none" in term.stdout) == (unread == 0)
    assert f"{count} images" in term.stdout


def test_unresolved_roles_are_reported_and_resolved_with_defs(cli, tmp_path):
    page = tmp_path / "roles.rst"
    page.write_text(
        "Validated for ROCm 6.3.0.\n\n.. list-table:: Docker image components\n"
        "    :header-rows: 1\n\n    * - Docker image\n      - hipBLASLt\n      - Python\n"
        "    * - rocm/x:rocm6.3.0-py3.12\n      - :version-ref:`hipBLASLt 6.3.0`\n      - 3.12\n"
    )
    out = tmp_path / "c.yaml"
    bare = cli("images", "import-rst", str(page), "--out", str(out), "--dry-run", "--json")
    assert bare.returncode == 0, bare.stderr[-2000:]
    (unread,) = json.loads(bare.stdout)["import"]["unread"]
    assert unread["line"] == 10 and unread["column"] == "hipBLASLt"
    assert unread["reason"] == "unresolved: :version-ref:`hipBLASLt 6.3.0`"
    term = cli("images", "import-rst", str(page), "--out", str(out), "--dry-run")
    assert "unresolved: :version-ref:`hipBLASLt 6.3.0`" in term.stdout
    done = cli("images", "import-rst", str(page), "--out", str(out), "--defs", str(CSV))
    assert done.returncode == 0, done.stderr[-2000:]
    assert 'hipblaslt: "0.10.0"' in out.read_text()


@pytest.mark.parametrize(
    ("text", "where", "expected"),
    [
        ("A page about PyTorch.\n\nNo table here.\n", ":1:", "expected a `.. list-table::`"),
        (
            "Intro\n\n.. list-table:: Docker image components\n    :header-rows: 2\n\n"
            "    * - Docker image\n      - PyTorch\n    * - Image\n      - Version\n",
            ":3:",
            "no data rows below the header",
        ),
    ],
)
def test_page_without_data_rows_is_exit_2_naming_file_and_line(
    cli, tmp_path, text, where, expected
):
    page = tmp_path / "page.rst"
    page.write_text(text)
    proc = cli("images", "import-rst", str(page), "--out", str(tmp_path / "c.yaml"))
    assert proc.returncode == 2
    said = " ".join((proc.stdout + proc.stderr).split())
    assert f"{page}{where}" in said and expected in said
    assert not (tmp_path / "c.yaml").exists()


@pytest.mark.parametrize(
    ("name", "text", "where", "expected"),
    [
        ("ragged.csv", "ROCm Version,6.3.0,6.2.4\nrocBLAS,4.3.0\n", ":2:", "one cell per release"),
        ("first.csv", "Release,6.3.0\nrocBLAS,4.3.0\n", ":1:", "expected 'ROCm Version'"),
        (
            "first.md",
            "## Release Compatibility Matrix\n\n| Torch | Py |\n| - | - |\n| 2 | 3 |\n",
            ":3:",
            "expected 'PyTorch version'",
        ),
        ("table.txt", "ROCm Version,6.3.0\n", ":1:", "expected ROCm's compatibility-matrix"),
    ],
)
def test_bad_release_table_is_exit_2_naming_file_and_line(
    cli, tmp_path, name, text, where, expected
):
    bad = tmp_path / name
    bad.write_text(text)
    out = tmp_path / "releases.json"
    proc = cli("images", "import-releases", str(bad), "--out", str(out))
    assert proc.returncode == 2
    said = " ".join((proc.stdout + proc.stderr).split())
    assert f"{bad}{where}" in said and expected in said
    assert not out.exists()


def _release_table(cli, tmp_path) -> Path:
    out = tmp_path / "releases.json"
    for source in (CSV, RELEASE_MD):
        proc = cli("images", "import-releases", str(source), "--out", str(out))
        assert proc.returncode == 0, proc.stderr[-2000:]
    doc = json.loads(out.read_text())
    assert doc["rocm"]["releases"][0] == "6.3.3" and len(doc["pytorch"]["rows"]) == 6
    return out


def test_host_audit_against_published_tables(cli, tmp_path):
    table = _release_table(cli, tmp_path)
    proc = cli("inventory", "audit", "--image", "host", "--releases", str(table), "--json")
    assert proc.returncode in (0, 1), proc.stderr[-2000:]
    claims = json.loads(proc.stdout)["published"]
    assert claims["rocm_release"] is None and "no ROCm release" in claims["note"]
    named = cli(
        "inventory",
        "audit",
        "--image",
        "host",
        "--releases",
        str(table),
        "--release",
        "6.3.0",
        "--json",
    )
    claims = json.loads(named.stdout)["published"]
    lacking = {f["subject"] for f in claims["findings"] if f["kind"] == "lacking"}
    assert {"hipBLASLt", "MIOpen", "RCCL", "rocBLAS"} <= lacking  # this host has no ROCm
    wrong = cli(
        "inventory", "audit", "--image", "host", "--releases", str(table), "--release", "5.7"
    )
    assert wrong.returncode == 2 and "--release 5.7: not a release" in wrong.stdout + wrong.stderr


def _minor(version: str) -> str:
    return ".".join(version.split("+")[0].split(".")[:2])


def test_release_md_with_a_rocm_column_imports_it_and_host_audit_uses_it(cli, tmp_path):
    out = tmp_path / "releases.json"
    proc = cli("images", "import-releases", str(RELEASE_MD_ROCM), "--out", str(out))
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "17 PyTorch releases" in proc.stdout
    rows = {r["pytorch"]: r for r in json.loads(out.read_text())["pytorch"]["rows"]}
    assert list(rows)[:3] == ["2.14", "2.13", "2.12"] and list(rows)[-1] == "1.12"
    assert all(r["has_rocm"] for r in rows.values())  # every row's Stable ROCm cell
    assert [rows[v]["rocm"] for v in ("2.14", "2.9", "2.6", "2.5", "1.12")] == [
        ["7.14"],
        ["6.4"],
        ["6.2.4"],
        ["6.2"],
        ["5.0"],
    ]
    assert rows["2.14"]["cuda"] == ["12.6", "13.0", "13.2"]  # "(CUDNN ...) (NCCL ...)" after
    assert rows["2.14"]["experimental_cuda"] == [] and rows["2.5"]["experimental_cuda"] == []
    audit = cli("inventory", "audit", "--image", "host", "--releases", str(out), "--json")
    assert audit.returncode in (0, 1), audit.stderr[-2000:]
    doc = json.loads(audit.stdout)
    findings = {f["subject"]: f for f in doc["published"]["findings"]}
    torch = doc["components"].get("pytorch")
    if torch is None:  # an interpreter without torch: nothing PyTorch published to compare
        assert findings == {}
        return
    row = rows.get(_minor(torch))
    if row is None:
        assert findings["pytorch"]["kind"] == "unpublished"
        return
    assert "pytorch" not in findings  # the later matrix publishes this PyTorch
    assert findings["python"]["published"] == row["python"]
    assert findings["python"]["source"] == RELEASE_MD_ROCM.name
    rocm = doc["components"].get("rocm")
    if rocm is None:
        assert "rocm" not in findings  # no ROCm measured: the column is not compared
    else:
        assert findings["rocm"]["published"] == ", ".join(row["rocm"])


@pytest.mark.docker
def test_fake_rocm_image_audit_shows_drift_from_its_release(cli, tmp_path):
    if shutil.which("docker") is None:
        pytest.skip("no docker client")
    table = _release_table(cli, tmp_path)
    args = ("inventory", "audit", "--image", "valorch/test:fake-rocm", "--pull", "never")
    proc = cli(*args, "--releases", str(table), "--json")
    assert proc.returncode == 0, proc.stderr[-2000:]  # published claims do not gate
    claims = json.loads(proc.stdout)["published"]
    assert claims["rocm_release"] == "6.3.0"  # the release the image measures
    kinds = {f["subject"]: (f["kind"], f["published"], f["measured"]) for f in claims["findings"]}
    assert kinds["hipBLASLt"] == ("agrees", "0.10.0", "0.10.0")
    assert kinds["MIOpen"] == ("agrees", "3.3.0", "3.3.0")
    assert kinds["UCX"] == ("drift", ">=1.15.0", "1.14.1")  # the image's UCX is older
    assert kinds["hipSPARSE"][0] == "lacking"
    older = cli(*args, "--releases", str(table), "--release", "6.2.4", "--json")
    kinds = {f["subject"]: f["kind"] for f in json.loads(older.stdout)["published"]["findings"]}
    assert kinds["hipBLASLt"] == "drift" and kinds["rocBLAS"] == "drift"
    term = cli(*args, "--releases", str(table))
    assert "published claims" in term.stdout and "ROCm 6.3.0" in term.stdout
    assert "1 drift" in term.stdout and "(shown, not gating)" in term.stdout


@pytest.mark.docker
def test_combination_pytorch_did_not_publish_is_flagged(cli, tmp_path):
    """Debian's PyTorch 1.13 on Python 3.11: PyTorch published 1.13 for Python 3.7 to 3.10."""
    if shutil.which("docker") is None:
        pytest.skip("no docker client")
    table = _release_table(cli, tmp_path)
    args = ("inventory", "audit", "--image", "cpu_debian12_py3.11_pytorch_1.13", "--pull", "never")
    proc = cli(*args, "--releases", str(table), "--json")
    # exit 1: Debian's torch module is not the release dpkg installed ("differs"); the
    # published table's findings are shown, never gating
    assert proc.returncode == 1, proc.stderr[-2000:]
    kinds = {f["kind"] for f in json.loads(proc.stdout)["findings"]} - {"ok", "unpinned"}
    assert kinds == {"differs"}, kinds
    findings = {f["subject"]: f for f in json.loads(proc.stdout)["published"]["findings"]}
    assert findings["python"]["kind"] == "unpublished"
    assert findings["python"]["published"] == ">=3.7, <=3.10"
    assert findings["python"]["measured"].startswith("3.11")
    term = cli(*args, "--releases", str(table))
    assert "unpublished" in term.stdout and "1 unpublished" in term.stdout
