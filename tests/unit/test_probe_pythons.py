"""The probe's own unit tests (those that import nothing but the probe, the standard library,
pytest, hypothesis and torch) also run on Python 3.8 and on the newest Python (`make probe-pythons`).
The Makefile's PROBE_TESTS and ruff's py38 targets must name every such test, and only those:
a new one would otherwise never run on the old interpreter the images have."""

import ast
import re
import sys

import tomllib
from conftest import ROOT

#: torch: its tests skip where it is missing (tests/needs.py), as in those venvs
ALLOWED = {"pytest", "hypothesis", "valorch_probe", "tests", "torch"}


def _imports(path):
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            yield node.module.split(".")[0]


def probe_only_tests():
    found = set()
    for path in sorted((ROOT / "tests" / "unit").glob("test_*.py")):
        mods = set(_imports(path))
        if "valorch_probe" in mods and all(
            m in ALLOWED or m in sys.stdlib_module_names for m in mods
        ):
            found.add(path.relative_to(ROOT).as_posix())
    return found


def test_the_makefile_runs_every_probe_only_test_on_the_other_pythons():
    text = (ROOT / "Makefile").read_text().replace("\\\n", " ")
    listed = set(re.search(r"^PROBE_TESTS\s*:=(.*)$", text, re.M).group(1).split())
    assert listed == probe_only_tests()


def test_ruff_keeps_every_probe_only_test_at_python38_syntax():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    targets = config["tool"]["ruff"]["per-file-target-version"]
    py38 = {path for path, version in targets.items() if path.startswith("tests/")}
    assert all(targets[p] == "py38" for p in py38)
    assert py38 == probe_only_tests()
