"""ROCm 7.x framework pages no longer carry the Docker table: ``images import-rst`` refuses
them clearly and says where the tags moved (the install guide's "Docker image support"
section), and imports that section: a ``docker pull`` tag before each components table, its
Docker Hub digest after it. Debian package versions in component cells are trimmed one way
and reported; a tag its columns contradict is imported with a note. Fixtures:
tests/fixtures/rocm-docs/README.md ("ROCm 7.x")."""

import json
from pathlib import Path

DOCS = Path(__file__).resolve().parents[1] / "fixtures" / "rocm-docs" / "pages"
FRAMEWORK = DOCS / "pytorch-compatibility.089d7513.docker-section.rst"
INSTALL = DOCS / "pytorch-install.66497698009.docker-section.rst"


def test_a_framework_page_without_tags_is_refused_naming_where_they_moved(cli, tmp_path):
    proc = cli("images", "import-rst", str(FRAMEWORK), "--out", str(tmp_path / "c.yaml"))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    said = " ".join(proc.stderr.split())
    assert "'pytorch-docker-support' of ROCm's Linux install guide" in said
    assert "import the install guide's page" in said and "fix the page" not in said
    assert "docs/install/3rd-party/pytorch-install.rst" in said
    assert not (tmp_path / "c.yaml").exists()


def test_the_install_guide_section_imports_with_digests_and_notes(cli, tmp_path):
    out = tmp_path / "images" / "rocm7.yaml"
    proc = cli("images", "import-rst", str(INSTALL), "--out", str(out), "--json")
    assert proc.returncode == 0, proc.stderr[-2000:]
    report = json.loads(proc.stdout)["import"]
    refs = [i["reference"] for i in report["images"]]
    assert refs == [
        "rocm/pytorch:rocm7.2_ubuntu24.04_py3.12_pytorch_release_2.9.1",
        "rocm/pytorch:rocm7.2_ubuntu22.04_py3.10_pytorch_release_2.9.1",
        "rocm/pytorch:rocm7.2_ubuntu24.04_py3.12_pytorch_release_2.8.0",
    ]
    listed = json.loads(cli("images", "list", "--catalog", str(out.parent), "--json").stdout)
    by_ref = {i["reference"]: i for i in listed if i["alias"] != "host"}
    one = by_ref["rocm/pytorch:rocm7.2_ubuntu24.04_py3.12_pytorch_release_2.8.0"]
    assert one["digest"] == (
        "sha256:fb6bfbeb27064cc70720b503192b3205ce601282b20c6258328ca5e1602bc3f0"
    )
    assert one["components"]["ucx"] == "1.16.0" and one["components"]["ompi"] == "4.1.6"
    trims = {n["column"]: n["reason"] for n in report["notes"]}
    assert trims["UCX"] == "Debian package version 1.16.0+ds-5ubuntu1: kept its upstream 1.16.0"
    assert trims["Open MPI"] == "Debian package version 4.1.6-7ubuntu2: kept its upstream 4.1.6"
    term = cli("images", "import-rst", str(INSTALL), "--out", str(out))
    assert term.returncode == 0 and "imported with a note" in term.stdout


def test_a_tag_its_columns_contradict_is_imported_with_a_note(cli, tmp_path):
    """The real section with one cell changed (composed: no published page was found whose
    tag contradicts its columns): the 2.8.0 image's Ubuntu cell says 22.04, its tag 24.04."""
    text = INSTALL.read_text()
    row = "               * - 24.04\n                 - `1.8.0"
    assert text.count(row) == 1
    page = tmp_path / "contradicts.rst"
    page.write_text(text.replace(row, row.replace("24.04", "22.04")))
    proc = cli("images", "import-rst", str(page), "--out", str(tmp_path / "c.yaml"), "--json")
    assert proc.returncode == 0, proc.stderr[-2000:]
    notes = json.loads(proc.stdout)["import"]["notes"]
    said = [n for n in notes if n["column"] == "ubuntu"]
    assert (
        len(said) == 1 and "the tag says ubuntu 24.04, the column says 22.04" in said[0]["reason"]
    )
