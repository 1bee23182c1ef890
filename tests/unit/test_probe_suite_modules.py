"""The probe's run of one suite imports only that suite's check modules
(``registry.load_suite``): its table of modules must name every module that declares the
suite or registers one of its checks, and the suite must then hold exactly the checks, in
exactly the order, that registering every module gives it. Each case runs in a fresh
interpreter, since the registry is the process's own."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from valorch_probe.registry import CHECK_MODULES, SUITE_MODULES

ROOT = Path(__file__).resolve().parents[2]

BY_MODULE = """
import importlib, json
from valorch_probe import registry
from valorch_probe.registry import CHECKS, SUITES
registry._first_import = ()  # the package registers nothing: each module is imported below
import valorch_probe.checks
registry._first_import = None
out = {}
for name in registry.CHECK_MODULES:
    suites, checks = set(SUITES), set(CHECKS)
    importlib.import_module("valorch_probe.checks." + name)
    out[name] = sorted(set(SUITES) - suites) + sorted({CHECKS[c].suite for c in set(CHECKS) - checks})
print(json.dumps(out))
"""

ONE_SUITE = """
import json, sys
from valorch_probe.loader import load_suite, select
from valorch_probe.registry import CHECKS
load_suite(sys.argv[1])
suite, chosen = select(sys.argv[1])
print(json.dumps({
    "checks": [c.id for c in chosen],
    "registered": sorted({c.suite for c in CHECKS.values()}),
    "modules": sorted(m.rpartition(".")[2] for m in sys.modules
                      if m.startswith("valorch_probe.checks.") and not m.rpartition(".")[2].startswith("_")),
}))
"""

EVERY_SUITE = """
import json
import valorch_probe.checks
from valorch_probe.registry import SUITES
print(json.dumps({name: s.checks for name, s in SUITES.items()}))
"""


def _python(code, *args):
    done = subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, cwd=ROOT, check=True
    )
    return json.loads(done.stdout)


def test_every_check_module_is_listed_once_in_registration_order():
    on_disk = {
        p.stem
        for p in (ROOT / "valorch_probe" / "checks").glob("*.py")
        if not p.stem.startswith("_")
    }
    assert sorted(CHECK_MODULES) == sorted(on_disk)
    assert len(set(CHECK_MODULES)) == len(CHECK_MODULES)


def test_the_table_names_each_suites_modules_and_no_module_serves_two_suites():
    suites_of = _python(BY_MODULE)
    derived = {}  # suite -> its modules, in registration order
    for module in CHECK_MODULES:
        assert len(set(suites_of[module])) == 1, (module, suites_of[module])
        derived.setdefault(suites_of[module][0], []).append(module)
    assert {s: tuple(m) for s, m in derived.items()} == SUITE_MODULES


@pytest.mark.parametrize("suite", sorted(SUITE_MODULES))
def test_one_suite_loaded_alone_holds_what_every_module_gives_it(suite):
    every = _python(EVERY_SUITE)
    alone = _python(ONE_SUITE, suite)
    assert alone["checks"] == every[suite]
    assert alone["registered"] in ([suite], [])  # a declared-only suite registers none itself
    assert set(SUITE_MODULES[suite]) <= set(alone["modules"])  # and the helpers they import


def test_an_unknown_suite_still_loads_every_module():
    done = subprocess.run(
        [sys.executable, "-c", ONE_SUITE, "no-such-suite"], capture_output=True, text=True, cwd=ROOT
    )
    assert done.returncode != 0 and "KeyError" in done.stderr


def test_no_check_module_imports_a_check_module_of_another_suite():
    """A check module that imports one of another suite's modules, even inside a function,
    registers that suite's checks into a run that loaded one suite alone, where their suite
    is not declared (``features.cuda.nvtx`` importing ``profiler_tools``): what suites share
    lives in a helper module (``_name``), which registers nothing."""
    import ast

    suite_of = {m: s for s, modules in SUITE_MODULES.items() for m in modules}
    crossing = []
    for module in CHECK_MODULES:
        path = ROOT / "valorch_probe" / "checks" / (module + ".py")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ImportFrom) or node.level != 1:
                continue
            names = [node.module] if node.module else [a.name for a in node.names]
            for name in names:
                if name in suite_of and suite_of[name] != suite_of[module]:
                    crossing.append("%s imports %s (%s)" % (module, name, suite_of[name]))
    assert crossing == []
