"""The house style is checked on every `make test`, by `make lint` and not inside pytest:
ruff's lint and format, import-linter's contracts (among them "scheduling imports neither
sqlalchemy nor the store" and "command modules are independent") and mypy, strict on
services, scheduling, store, matrix and regression (docs/style.md). The tools run once, in
`make lint`, which `make test` runs before the tests; what is left here checks that they are
wired and configured as the docs say, and that no test runs them a second time."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LINT = ["ruff check .", "ruff format --check .", "lint-imports", "mypy"]


def target(name: str) -> tuple[list[str], list[str]]:
    """A Makefile target's prerequisites and its recipe's commands (``$(BIN)/`` dropped)."""
    text = (ROOT / "Makefile").read_text()
    m = re.search(rf"^{name}:(.*)\n((?:\t.*\n)*)", text, re.MULTILINE)
    assert m, f"the Makefile has no target {name!r}"
    recipe = [line.strip().replace("$(BIN)/", "") for line in m.group(2).splitlines()]
    return m.group(1).split(), recipe


def test_make_test_runs_make_lint_first_and_lint_runs_every_tool():
    prerequisites, recipe = target("test")
    # lint is a prerequisite, or a target of the sub-make that runs the steps before pytest
    # side by side (make -j)
    first = [i for i, c in enumerate(recipe) if c.startswith("$(MAKE)") and "lint" in c.split()]
    tests = [i for i, c in enumerate(recipe) if "pytest" in c]
    assert tests and ("lint" in prerequisites or (first and first[0] < tests[0])), recipe
    assert target("lint")[1] == LINT
    assert "make test" in (ROOT / ".ci" / "run").read_text()


def test_no_test_runs_the_linters_again():
    """ruff, lint-imports and mypy take minutes on this machine and run in `make lint`; a test
    that shells out to them again doubles that cost (docs/testing.md)."""
    # an argv list naming the tool first (["ruff", …] or [_tool("ruff"), …]), not a
    # config key such as config["tool"]["ruff"]
    argv = re.compile(r"""\[\s*(?:_tool\()?["'](?:ruff|mypy|lint-imports)["']\s*[,)]""")
    found = [
        str(p.relative_to(ROOT))
        for p in (ROOT / "tests").rglob("*.py")
        if p != Path(__file__) and argv.search(p.read_text())
    ]
    assert not found, found


def test_the_contracts_the_docs_name_are_configured():
    import tomllib  # Python 3.11+; this test's only user of it

    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    names = [c["name"] for c in config["tool"]["importlinter"]["contracts"]]
    for contract in (
        "Layers: cli > commands > services > workflows > side effects > vocabulary",
        "The probe runs inside images: it imports nothing of the orchestrator",
        "Scheduling decides, a recorder keeps: no database in scheduling",
        "Commands are independent",
    ):
        assert any(n.startswith(contract) for n in names), (contract, names)


def test_mypy_is_strict_on_the_layers_that_hold_the_decisions():
    text = (ROOT / "pyproject.toml").read_text()
    strict = text[text.index("[tool.mypy]") :]
    for package in ("services", "scheduling", "store", "matrix", "regression"):
        assert f'"orchestrator.{package}.*"' in strict, package
    assert "disallow_untyped_defs = true" in strict and "disallow_any_generics = true" in strict
