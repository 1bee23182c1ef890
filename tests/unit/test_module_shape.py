"""The product's shape, measured from its source with ``ast``: no import circle among the
modules of ``orchestrator/`` and ``valorch_probe/`` (every import counts: at the top, inside
a function, under ``TYPE_CHECKING``), and no function longer than 100 lines (from its
``def`` to its last line). Both are what lets a reader take one module, or one function, at
a time (docs/design.md, "The parts"; docs/style.md)."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import ROOT

PACKAGES = ("orchestrator", "valorch_probe")
LONGEST = 100

# Circles and long functions other work removes; the integrator deletes each line when that
# work has merged. Nothing else may be added here.
KNOWN_CIRCLES: set[frozenset[str]] = set()
KNOWN_LONG: set[str] = set()


def _modules(root: Path) -> dict[str, tuple[Path, bool]]:
    """Every module of the packages: dotted name -> (file, is a package)."""
    found = {}
    for pkg in PACKAGES:
        for path in sorted((root / pkg).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            is_pkg = parts[-1] == "__init__"
            found[".".join(parts[:-1] if is_pkg else parts)] = (path, is_pkg)
    return found


def import_graph(root: Path = ROOT) -> dict[str, set[str]]:
    """module -> the modules of the packages it imports anywhere in its file. ``from P import
    name`` is an edge to the submodule ``P.name`` where there is one, else to ``P``."""
    modules = _modules(root)
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, (path, is_pkg) in modules.items():
        package = name.split(".") if is_pkg else name.split(".")[:-1]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    base = ".".join([*package[: len(package) - node.level + 1], base]).strip(".")
                targets = [
                    f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base
                    for a in node.names
                ]
            graph[name].update(t for t in targets if t in modules and t != name)
    return graph


def circles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[frozenset[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(frozenset(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def long_functions(root: Path = ROOT, longest: int = LONGEST) -> Iterator[tuple[str, int]]:
    for pkg in PACKAGES:
        for path in sorted((root / pkg).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                    lines = (node.end_lineno or node.lineno) - node.lineno + 1
                    if lines > longest:
                        yield f"{path.relative_to(root)}:{node.name}", lines


def test_no_module_imports_itself_round_a_circle():
    found = circles(import_graph())
    assert [sorted(c) for c in found if c not in KNOWN_CIRCLES] == []


def test_the_circle_finder_finds_a_circle_hidden_in_a_function(tmp_path):
    """The measure itself: a function-level import that closes a circle is one, and an
    import of a sibling submodule through its package is not."""
    pkg = tmp_path / "orchestrator"
    (pkg / "sub").mkdir(parents=True)
    (tmp_path / "valorch_probe").mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("from .a import x\n")
    (pkg / "sub" / "a.py").write_text("from . import b\nx = 1\n")
    (pkg / "sub" / "b.py").write_text("def f():\n    from .c import y\n")
    (pkg / "sub" / "c.py").write_text("from orchestrator.sub.a import x\ny = 2\n")
    assert circles(import_graph(tmp_path)) == [
        frozenset({"orchestrator.sub.a", "orchestrator.sub.b", "orchestrator.sub.c"})
    ]


def test_no_function_is_longer_than_a_hundred_lines():
    long = {name: lines for name, lines in long_functions() if name not in KNOWN_LONG}
    assert long == {}


@pytest.mark.parametrize("lines", [LONGEST, LONGEST + 1])
def test_the_length_is_counted_from_def_to_the_last_line(tmp_path, lines):
    (tmp_path / "orchestrator").mkdir()
    (tmp_path / "valorch_probe").mkdir()
    body = "".join(f"    x{i} = {i}\n" for i in range(lines - 1))
    (tmp_path / "orchestrator" / "m.py").write_text(f"def f():\n{body}")
    got = list(long_functions(tmp_path))
    assert got == ([] if lines <= LONGEST else [("orchestrator/m.py:f", lines)])
