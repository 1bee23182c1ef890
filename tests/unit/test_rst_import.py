"""Importing a published image components list-table into catalog entries."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from orchestrator.catalog import rst_import
from orchestrator.catalog.core import Catalog
from orchestrator.catalog.rst_table import clean

ROOT = Path(__file__).resolve().parents[2]
SEED = (
    Path(__file__).resolve().parents[1] / "fixtures" / "seeds" / "rocm-pytorch-compatibility.rst"
)  # a copy of ROCm's published page (docs/design.md, "The pages valorch replaces")
CATALOG = ROOT / "images" / "rocm.yaml"


@pytest.fixture(scope="module")
def seed_text() -> str:
    return SEED.read_text(encoding="utf-8")


def test_seed_yields_the_catalogued_images_exactly(seed_text):
    entries = rst_import.read_page(seed_text, str(SEED)).entries
    catalogued = yaml.safe_load(CATALOG.read_text())["images"]
    assert len(entries) == 8
    assert [e["alias"] for e in entries] == [e["alias"] for e in catalogued]
    for got, want in zip(entries, catalogued, strict=False):
        assert got == want  # reference, digest, os and every component
    assert entries[2]["components"]["python"] == "3.9.18"  # the table's value, not the tag's py3.9
    assert (
        entries[0]["digest"]
        == "sha256:98ddf20333bd01ff749b8092b1190ee369a75d3b8c71c2fac80ffdcb1a98d529"
    )


def test_reimport_into_the_catalog_is_idempotent(seed_text):
    existing = CATALOG.read_text()
    plan = rst_import.plan_import(seed_text, existing, str(SEED), str(CATALOG))
    assert not plan.changed and plan.text == existing
    assert [c.kind for c in plan.merge.changes] == ["unchanged"] * 8


def test_fresh_import_renders_a_loadable_catalog_identical_to_the_hand_written_one(
    seed_text, tmp_path
):
    plan = rst_import.plan_import(seed_text, None, str(SEED))
    assert plan.changed and plan.merge.count("added") == 8
    (tmp_path / "rocm.yaml").write_text(plan.text)
    cat = Catalog.load(tmp_path)
    assert cat.resolve("rocm6.3_ubuntu22.04_py3.10_pytorch_2.3").components["ucx"] == "1.14.1"

    # the same text as images/rocm.yaml below its comment
    def body(t):
        return t[t.index("family:") :]

    assert body(plan.text) == body(CATALOG.read_text())
    again = rst_import.plan_import(seed_text, plan.text, str(SEED))
    assert not again.changed


def test_changed_entry_is_reported_with_its_details_and_other_keys_survive(seed_text):
    doc = yaml.safe_load(CATALOG.read_text())
    doc["images"][0]["components"]["pytorch"] = "2.4.1"
    doc["images"][0]["notes"] = "kept"
    doc["images"].append({"alias": "mine", "reference": "me/x:1", "components": {"python": "3.12"}})
    plan = rst_import.plan_import(seed_text, yaml.safe_dump(doc, sort_keys=False), str(SEED))
    assert plan.changed
    assert (
        plan.merge.count("changed") == 1
        and plan.merge.count("unchanged") == 7
        and plan.merge.count("kept") == 1
    )
    change = next(c for c in plan.merge.changes if c.kind == "changed")
    assert change.details == ("components.pytorch: 2.4.1 → 2.4.0",)
    rewritten = yaml.safe_load(plan.text)["images"]
    assert rewritten[0]["components"]["pytorch"] == "2.4.0" and rewritten[0]["notes"] == "kept"
    assert rewritten[-1]["alias"] == "mine"


VARIANT = """
Some text.

.. list-table:: Docker image components
   :header-rows: 1
   :widths: 20 10 10 10 10

   * - **Docker image**
     - **PyTorch**
     - Linux
     - **Python** :sup:`1`
     - Open MPI
     - TensorBoard
   * - `rocm/pytorch:rocm6.2_ubuntu22.04_py3.10_pytorch_release_2.3.0 <https://example.invalid/layers/rocm/pytorch/rocm6.2_ubuntu22.04_py3.10_pytorch_release_2.3.0/images/sha256-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa>`__
     - `2.3.0 <https://example.invalid/x>`_ |icon|
     - Ubuntu 22.04
     - **3.10.14**
     - ``4.1.5``
     - —
   * - ``myorg/torch:cpu-2.5``
     - 2.5.1
     - Debian 12
     - 3.11
     - 4.1.4
     - *2.18.0*

.. list-table:: Not an image table
   :header-rows: 1

   * - Feature
     - Status
   * - bf16
     - yes
"""


def test_header_and_markup_variants():
    entries = rst_import.read_page(VARIANT).entries
    assert len(entries) == 2
    a, b = entries
    assert a["alias"] == "rocm6.2_ubuntu22.04_py3.10_pytorch_2.3"
    assert a["reference"] == "rocm/pytorch:rocm6.2_ubuntu22.04_py3.10_pytorch_release_2.3.0"
    assert a["digest"] == "sha256:" + "a" * 64
    assert a["os"] == "ubuntu 22.04"
    assert a["components"] == {
        "rocm": "6.2",
        "pytorch": "2.3.0",
        "ubuntu": "22.04",
        "python": "3.10.14",
        "ompi": "4.1.5",
    }  # the dash cell is no expectation
    assert b["reference"] == "myorg/torch:cpu-2.5" and "digest" not in b
    assert b["alias"] == "cpu-2.5" and b["os"] == "debian 12"
    assert b["components"] == {
        "pytorch": "2.5.1",
        "debian": "12",
        "python": "3.11",
        "ompi": "4.1.4",
        "tensorboard": "2.18.0",
    }


def test_clean_strips_markup():
    assert clean("**2.4.0** :sup:`2`") == "2.4.0"
    assert clean("`master <https://example.invalid/m>`_") == "master"
    assert clean(".. raw:: html\n\n<a href='x'></a>") == ""


@pytest.mark.parametrize(
    "text, message",
    [
        ("no tables here", "page.rst:1: no list-table on the page"),
        (
            ".. list-table:: t\n   :header-rows: 1\n\n   * - Docker\n     - PyTorch\n   * - nothing useful\n     - 2.4\n",
            "names no image",
        ),
        (
            ".. list-table:: t\n   :header-rows: 1\n\n   * - Docker\n     - PyTorch\n   * - a/b:c\n",
            "has 1 cells",
        ),
    ],
)
def test_bad_input_names_the_problem(text, message):
    with pytest.raises(rst_import.RstImportError, match=message):
        rst_import.read_page(text, "page.rst")
