"""The components layout (matrix render --layout components, and the site's page) says what
the inventories say: a torchvision that is installed but does not import is no ✓ ok; an
image whose inventory was never taken says "no inventory", never "not run"; an image audited
under another name of the same image (its tag) uses that inventory."""

from __future__ import annotations

import json
import subprocess

import pytest

from tests.conftest import run_cli

pytestmark = pytest.mark.docker
BROKEN = "cpu_debian12_py3.11_pytorch_1.13_broken_torchvision"


def _cells(doc: dict, alias: str) -> dict:
    (row,) = [r for r in doc["rows"] if r["key"] == alias]
    return row["cells"]


def test_components_show_broken_imports_and_inventories_taken_under_another_name(tmp_path):
    for ref in ("valorch/test:broken-torchvision", "valorch/test:debian-torch"):
        if subprocess.run(["docker", "image", "inspect", ref], capture_output=True).returncode:
            pytest.skip(f"{ref} is not built (make test-images)")
    db = tmp_path / "v.sqlite"
    audit = run_cli("inventory", "audit", "--image", BROKEN, "--pull", "never", db=db)
    assert audit.returncode == 1 and "does not import" in audit.stdout + audit.stderr
    # the 1.13 image audited by its tag, not its catalog alias
    tagged = run_cli(
        "inventory", "audit", "--image", "valorch/test:debian-torch", "--pull", "never", db=db
    )
    assert tagged.returncode in (0, 1), tagged.stderr
    proc = run_cli("matrix", "render", "--layout", "components", "--format", "json", db=db)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    vision = _cells(doc, BROKEN)["torchvision"]
    assert vision["verdict"] == "broken" and "does not import" in vision["text"], vision
    audited = _cells(doc, "cpu_debian12_py3.11_pytorch_1.13")["PyTorch"]
    assert audited["verdict"] in ("ok", "drift") and audited["runs"], audited
    never = _cells(doc, "cpu_debian11_py3.9")["Python"]
    assert never["verdict"] == "no-inventory" and never["text"] == "3.9", never
    md = run_cli("matrix", "render", "--layout", "components", "--format", "html", db=db).stdout
    assert "not run" not in md
