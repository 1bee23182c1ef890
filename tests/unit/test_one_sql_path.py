"""The store is read and written through one SQL path (SQLAlchemy and the queries in
``store/``), the console script ends through Python's own exit, and every dependency
whose internals valorch touches is pinned to the range it is tested with."""

import ast
import importlib.metadata
from pathlib import Path

from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[2]
PKG = ROOT / "orchestrator"

#: dependency -> the module that reaches into its internals
INTERNALS_TOUCHED = {
    "typer": "orchestrator/commands/helptext.py",
    "docker": "orchestrator/executors/sdk.py",
}


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def test_only_the_store_speaks_sql():
    """The standard library's sqlite3 is the store's business alone: no second
    implementation of a query elsewhere."""
    outside = sorted(
        str(p.relative_to(ROOT))
        for p in PKG.rglob("*.py")
        if "sqlite3" in _imports(p) and PKG / "store" not in p.parents
    )
    assert outside == []


def test_the_console_script_uses_no_private_teardown():
    tree = ast.parse((PKG / "cli.py").read_text(encoding="utf-8"))
    called = {
        f"{n.value.id}.{n.attr}"
        for n in ast.walk(tree)
        if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)
    }
    assert not {c for c in called if c.split(".")[1].startswith("_")}, called
    assert "os._exit" not in called and "atexit._run_exitfuncs" not in called


def test_a_dependency_whose_internals_are_touched_has_a_tested_range():
    import tomllib

    deps = {
        Requirement(d).name: Requirement(d)
        for d in tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    }
    for name, module in INTERNALS_TOUCHED.items():
        assert (ROOT / module).is_file()
        spec = deps[name].specifier
        assert any(s.operator == "<" for s in spec), f"{name}: no upper bound"
        assert any(s.operator == ">=" for s in spec), f"{name}: no lower bound"
        installed = importlib.metadata.version(name)
        assert spec.contains(installed), f"{name} {installed} is outside {spec}"
