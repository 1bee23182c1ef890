"""What a test needs, said by markers (pyproject.toml lists them), so that each group runs
alone: ``-m "not cli and not torch and not docker and not slurm and not browser and not
postgres"`` is the quick group that needs nothing but this package and its test extras.

Two markers are added here, from what a test's code refers to, so that no test has to
remember them:

- ``cli``: the test starts the valorch console script. A test is marked when it uses the
  ``cli`` fixture or refers to ``run_cli``, ``VALORCH`` or ``selftest_at_once`` of the root
  conftest: in its own code, in the fixtures it uses, or in a function of tests/ that these
  call (followed by name through the modules' globals).
- ``torch``: the test imports PyTorch in this interpreter (its code names ``torch``).

A test marks itself where its need is not in its code (``@pytest.mark.torch`` on a test that
runs the probe on the host's torch in a subprocess). A marked test whose component is
missing is skipped with a reason that names it and how to get it.
"""

from __future__ import annotations

import importlib.util
import inspect
import sys
import types
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
VALORCH = Path(sys.executable).with_name("valorch")
CLI_NAMES = frozenset({"run_cli", "VALORCH", "selftest_at_once"})
TORCH_NAMES = frozenset({"torch"})

MISSING = {
    "cli": lambda: (
        None
        if VALORCH.exists()
        else f"the valorch console script is not installed at {VALORCH}: pip install -e '.[test]'"
    ),
    "torch": lambda: (
        None
        if _importable("torch")
        else "PyTorch is not installed in this interpreter: pip install -e '.[torch]'"
    ),
}


def _importable(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):  # blocked (None in sys.modules) or a broken install
        return False


def _code_names(code: types.CodeType) -> set[str]:
    """The global and attribute names a code object and the functions nested in it use."""
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _code_names(const)
    return names


def _in_tests(func: types.FunctionType) -> bool:
    try:
        return TESTS in Path(inspect.getfile(func)).resolve().parents
    except TypeError:
        return False


def names_used(funcs: list, seen: set | None = None) -> set[str]:
    """Every name the functions refer to, following the functions of tests/ they call."""
    seen = set() if seen is None else seen
    found: set[str] = set()
    todo = [inspect.unwrap(f) for f in funcs]
    while todo:
        func = todo.pop()
        if not isinstance(func, types.FunctionType) or func in seen or not _in_tests(func):
            continue
        seen.add(func)
        names = _code_names(func.__code__)
        found |= names
        for name in names:
            target = func.__globals__.get(name)
            if isinstance(target, types.FunctionType):
                todo.append(target)
    return found


def _functions_of(item: pytest.Item) -> list:
    funcs = [getattr(item, "function", None)]
    info = getattr(item, "_fixtureinfo", None)
    for defs in info.name2fixturedefs.values() if info else ():
        funcs += [d.func for d in defs]
    return [f for f in funcs if f is not None]


def mark(items: list[pytest.Item]) -> None:
    """Add the cli and torch markers, then skip what this machine cannot run, saying why."""
    for item in items:
        names = names_used(_functions_of(item))
        module = getattr(item, "module", None)
        if "cli" in getattr(item, "fixturenames", ()) or names & CLI_NAMES:
            item.add_marker(pytest.mark.cli)
        if names & TORCH_NAMES or (
            module is not None and isinstance(getattr(module, "torch", None), types.ModuleType)
        ):
            item.add_marker(pytest.mark.torch)
    for marker, why in MISSING.items():
        reason = why()
        if reason is None:
            continue
        for item in items:
            if marker in item.keywords:
                item.add_marker(pytest.mark.skip(reason=reason))
