"""The vendors' published release tables: ROCm's historical compatibility matrix (CSV as
published) and PyTorch's RELEASE.md matrix (Markdown as published), and an inventory
against them."""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestrator.catalog import releases
from orchestrator.components import Component, Inventory

FIX = Path(__file__).resolve().parents[1] / "fixtures"
CSV = FIX / "rocm-docs" / "compatibility-matrix-historical-6.0.csv"
OLD_CSV = FIX / "rocm-docs" / "compatibility-matrix-historical-6.0.06f3caf8.csv"
RELEASE_MD = FIX / "pytorch-release" / "RELEASE.aa6104e2.md"
RELEASE_MD_ROCM = FIX / "pytorch-release" / "RELEASE.e2da267b.md"  # C++, Stable ROCm columns

# the column layout of later RELEASE.md versions (C++ and Stable ROCm columns added)
LATER = """## Release Compatibility Matrix

Following is the Release Compatibility Matrix for PyTorch releases:

| PyTorch version | Python | C++ | Stable CUDA | Experimental CUDA | Stable ROCm |
| --- | --- | --- | --- | --- | --- |
| 2.6 | >=3.9, <=3.13, (3.13t experimental) | C++17 | CUDA 11.8, CUDA 12.4 (CUDNN 9.1.0.70) | CUDA 12.6 (CUDNN 9.5.1.17) | ROCm 6.2.4 |
| 2.5 | >=3.9, <=3.12, (3.13 experimental) | C++17 | CUDA 11.8, CUDA 12.1, CUDA 12.4, CUDNN 9.1.0.70 | None | ROCm 6.2 |
"""


def inv(**versions: str) -> Inventory:
    return Inventory(
        components=tuple(
            Component(name=k.replace("__", "."), value=v, source="api") for k, v in versions.items()
        )
    )


@pytest.fixture(scope="module")
def rocm() -> dict:
    return releases.parse_rocm_csv(CSV.read_text(encoding="utf-8"), "matrix.csv")


def test_historical_matrix_reads_every_release_and_library(rocm):
    assert rocm["releases"][:3] == ["6.3.3", "6.3.2", "6.3.1"] and rocm["releases"][-1] == "6.0.0"
    libs = rocm["libraries"]
    assert libs["hipBLASLt"]["6.3.0"] == "0.10.0" and libs["hipBLASLt"]["6.2.4"] == "0.8.0"
    assert libs["MIOpen"]["6.3.0"] == "3.3.0" and libs["RCCL"]["6.2.0"] == "2.20.5"
    assert libs["PyTorch"]["6.3.0"] == "2.4, 2.3, 2.2, 2.1, 2.0, 1.13"  # :doc: markup gone
    assert "FRAMEWORK SUPPORT" not in libs  # section headings are no rows
    old = releases.parse_rocm_csv(OLD_CSV.read_text(encoding="utf-8"), "old.csv")
    assert old["releases"][0] == "6.2.1"  # the matrix as of November 2024


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "t.csv:1: empty file"),
        ("Version,6.3.0\nrocBLAS,4.3.0\n", "t.csv:1: unknown first column 'Version'"),
        ("ROCm Version,6.3.0,latest\n", "t.csv:1: column 'latest' is not a ROCm release"),
        ("ROCm Version,6.3.0,6.2.4\nrocBLAS,4.3.0\n", "t.csv:2: 2 cells, the header has 3"),
        ('ROCm Version,6.3.0\nhipBLAS,2.3.0\n"a,b",1,2\n', "t.csv:3: 3 cells, the header has 2"),
    ],
)
def test_bad_csv_names_file_line_and_what_was_expected(text, message):
    with pytest.raises(releases.ReleaseTableError, match=message) as e:
        releases.parse_rocm_csv(text, "t.csv")
    assert "expected" in str(e.value)


def test_library_findings_agree_drift_and_lacking(rocm):
    image = inv(hipblaslt="0.10.0", rocblas="4.3.0", miopen="3.2.0", ucx="1.14.1", pytorch="2.4.1")
    found = {f.subject: f for f in releases.library_findings(rocm, "6.3.0", image)}
    assert found["hipBLASLt"].kind == "agrees" and found["rocBLAS"].kind == "agrees"
    assert found["MIOpen"].kind == "drift" and found["MIOpen"].published == "3.3.0"
    assert found["UCX"].kind == "drift"  # ">=1.15.0" published, 1.14.1 measured
    assert found["RCCL"].kind == "lacking" and found["RCCL"].measured is None
    assert found["PyTorch"].kind == "agrees"  # 2.4.1 is one of "2.4, 2.3, …"
    assert "JAX" not in found  # a framework the image lacks is no finding
    assert "Tested user space versions" not in found  # "6.3.x" is no library version
    assert releases.release_of(rocm, "6.3") == "6.3.0" and releases.release_of(rocm, "5.7") is None


def test_release_md_matrix_as_published():
    table = releases.parse_pytorch_release(RELEASE_MD.read_text(encoding="utf-8"), "RELEASE.md")
    rows = {r["pytorch"]: r for r in table["rows"]}
    assert list(rows) == ["2.3", "2.2", "2.1", "2.0", "1.13", "1.12"]
    assert rows["2.3"]["cuda"] == ["11.8"] and rows["2.3"]["experimental_cuda"] == ["12.1"]
    assert rows["2.3"]["python"] == ">=3.8, <=3.11, (3.12 experimental)"
    assert not rows["2.3"]["has_rocm"]
    later = {r["pytorch"]: r for r in releases.parse_pytorch_release(LATER, "L.md")["rows"]}
    assert later["2.6"]["cuda"] == ["11.8", "12.4"] and later["2.6"]["rocm"] == ["6.2.4"]


def test_release_md_with_a_rocm_column_as_published():
    text = RELEASE_MD_ROCM.read_text(encoding="utf-8")
    rows = {r["pytorch"]: r for r in releases.parse_pytorch_release(text, "R.md")["rows"]}
    assert len(rows) == 17 and all(r["has_rocm"] for r in rows.values())
    assert rows["2.13"]["rocm"] == ["7.2"] and rows["2.10"]["rocm"] == ["7.1"]
    assert rows["2.0"]["rocm"] == ["5.4"] and rows["2.0"]["python"] == ">=3.8, <=3.11"
    assert rows["2.11"]["cuda"] == ["12.6", "12.8", "13.0"]
    assert rows["2.11"]["experimental_cuda"] == []  # "--"
    assert rows["2.13"]["line"] == 55  # the matrix ends at the CUDA support matrix heading
    assert "12.6.3" not in rows


def test_rocm_column_of_the_published_matrix_flags_a_rocm_pytorch_did_not_publish():
    text = RELEASE_MD_ROCM.read_text(encoding="utf-8")
    table = releases.parse_pytorch_release(text, "RELEASE.md")

    def kinds(**versions: str) -> dict[str, str]:
        return {f.subject: f.kind for f in releases.pytorch_findings(table, inv(**versions))}

    assert kinds(pytorch="2.6.0", python="3.12.9", rocm="6.2.4") == {
        "python": "agrees",
        "rocm": "agrees",
    }
    assert kinds(pytorch="2.9.1", python="3.12.9", rocm="6.4.3")["rocm"] == "agrees"
    assert kinds(pytorch="2.6.0", python="3.12.9", rocm="6.3.0")["rocm"] == "unpublished"
    late = releases.pytorch_findings(table, inv(pytorch="2.14.0", python="3.12.1", rocm="7.1.0"))
    (rocm,) = [f for f in late if f.subject == "rocm"]
    assert (rocm.kind, rocm.published, rocm.measured) == ("unpublished", "7.14", "7.1.0")
    assert "PyTorch publishes ROCm 7.14" in rocm.message


def test_python_ranges():
    spec = ">=3.8, <=3.11, (3.12 experimental)"
    assert releases.python_allowed(spec, "3.11.9") and releases.python_allowed(spec, "3.12.1")
    assert not releases.python_allowed(spec, "3.13.0") and not releases.python_allowed(
        spec, "3.7.1"
    )
    assert releases.python_allowed(">=3.10, <=(3.14, 3.14t experimental)", "3.14.0")


def test_combinations_pytorch_did_not_publish_are_flagged():
    table = releases.parse_pytorch_release(RELEASE_MD.read_text(encoding="utf-8"), "RELEASE.md")
    ok = releases.pytorch_findings(
        table, inv(pytorch="2.3.1", python="3.11.2", pytorch__cuda="12.1")
    )
    assert {f.subject: f.kind for f in ok} == {"python": "agrees", "cuda": "agrees"}
    bad = releases.pytorch_findings(
        table, inv(pytorch="2.1.2", python="3.12.1", pytorch__cuda="12.4")
    )
    assert {f.subject: f.kind for f in bad} == {"python": "unpublished", "cuda": "unpublished"}
    unknown = releases.pytorch_findings(table, inv(pytorch="2.13.0", python="3.11.2"))
    assert [(f.subject, f.kind) for f in unknown] == [("pytorch", "unpublished")]
    later = releases.parse_pytorch_release(LATER, "L.md")
    rocm = releases.pytorch_findings(later, inv(pytorch="2.6.0", python="3.12.9", rocm="6.3.0"))
    assert {f.subject: f.kind for f in rocm} == {"python": "agrees", "rocm": "unpublished"}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("# Releasing\nnothing here\n", "R.md:1: no '## Release Compatibility Matrix'"),
        (
            "## Release Compatibility Matrix\n\n| Torch | Python |\n| --- | --- |\n| 2.3 | 3.11 |\n",
            "R.md:3: unknown first column 'Torch'",
        ),
        (
            "## Release Compatibility Matrix\n\n| PyTorch version | Python |\n| --- | --- |\n| 2.3 |\n",
            "R.md:5: 1 cells, the header has 2",
        ),
    ],
)
def test_bad_release_md_names_file_line_and_what_was_expected(text, message):
    with pytest.raises(releases.ReleaseTableError, match=message):
        releases.parse_pytorch_release(text, "R.md")


def test_libraries_layout_shows_the_published_version_beside_the_measured(rocm):
    from orchestrator.matrix.libraries import ImageInventory, libraries_table

    comps = {"rocm": "6.3.0", "hipblaslt": "0.10.0", "miopen": "3.2.0"}
    image = ImageInventory("img", "rocm", "run-1", comps)
    published = {"img": releases.published_versions(rocm, comps)}
    rows = {r.key: r.cells[0].text for r in libraries_table([image], published).rows}
    assert rows["hipBLASLt"] == "0.10.0 (published 0.10.0)"
    assert rows["MIOpen"] == "3.2.0 (published 3.3.0)"  # what the release ships differs
    plain = {r.key: r.cells[0].text for r in libraries_table([image]).rows}
    assert plain["hipBLASLt"] == "0.10.0"
    assert releases.published_versions(rocm, {"rocm": "5.7.1"}) == {}
