"""``images list`` at a 200-column terminal (second look, bug 21): every alias and the
reference a user pulls are shown whole, the expected components wrap between their
``name=value`` words instead of being cut (``torchv…``), and the digest is shown short, as
docker shows image ids, instead of folded into an 8-character column; narrower terminals get
one record per image rather than cut values."""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import pytest
from root_helpers import ROOT, VALORCH

pytestmark = pytest.mark.cli


def _at_terminal(columns: int) -> list[str]:
    if shutil.which("script") is None:
        pytest.skip("util-linux's script is not installed")
    done = subprocess.run(
        ["script", "-qec", f"stty cols {columns} rows 50; {VALORCH} images list", "/dev/null"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", done.stdout).replace("\r", "").splitlines()


def _catalog() -> list[dict]:
    done = subprocess.run(
        [VALORCH, "images", "list", "--json"], capture_output=True, text=True, cwd=ROOT
    )
    return json.loads(done.stdout)


@pytest.mark.parametrize("columns", [200, 100])
def test_every_alias_and_reference_whole_and_nothing_cut(columns):
    lines = _at_terminal(columns)
    assert max(len(line) for line in lines) <= columns
    text = "\n".join(lines)
    assert "…" not in text
    words = text.replace("│", " ").split()
    for image in _catalog():
        assert image["alias"] in words and image["reference"] in words, image["alias"]
        if image["digest"]:
            assert image["digest"][: len("sha256:") + 12] in words
            assert image["digest"] not in text  # short, as docker shows image ids
    if columns == 200:
        assert any(line.startswith("┃ alias") for line in lines), "the table, not records"
