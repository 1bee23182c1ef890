"""The house style holds on the tree as it is (issue: "ruff, mypy and lint-imports run in
``make test`` and pass"): ruff's lint and format, import-linter's contracts (among them
"scheduling imports neither sqlalchemy nor the store" and "command modules are
independent"), and mypy strict on services, scheduling, store, matrix and regression. Each
runs as ``make lint`` runs it, from the repository root."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


def _tool(name: str) -> str:
    path = BIN / name
    if not path.exists():
        pytest.skip(f"{name} is not installed: pip install -e '.[test]' (make test installs it)")
    return str(path)


@pytest.mark.parametrize(
    "argv",
    [["ruff", "check", "."], ["ruff", "format", "--check", "."], ["lint-imports"], ["mypy"]],
    ids=["ruff check", "ruff format", "lint-imports", "mypy"],
)
def test_the_style_check_passes(argv):
    done = subprocess.run(
        [_tool(argv[0]), *argv[1:]], cwd=ROOT, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, (done.stdout + done.stderr)[-4000:]


def test_the_contracts_named_by_the_issue_are_kept():
    done = subprocess.run(
        [_tool("lint-imports")], cwd=ROOT, capture_output=True, text=True, timeout=600
    )
    for contract in (
        "Scheduling decides, a recorder keeps: no database in scheduling",
        "Commands are independent",
    ):
        assert f"{contract}" in done.stdout and "KEPT" in done.stdout, done.stdout[-3000:]
    assert "BROKEN" not in done.stdout


def test_mypy_is_strict_where_the_issue_asks():
    text = (ROOT / "pyproject.toml").read_text()
    strict = text[text.index("[tool.mypy]") :]
    for package in ("services", "scheduling", "store", "matrix", "regression"):
        assert f'"orchestrator.{package}.*"' in strict, package
    assert "disallow_untyped_defs = true" in strict and "disallow_any_generics = true" in strict
