"""tests/conftest.py's helpers (run_cli, ROOT, VALORCH) for the acceptance tests, loaded by
path: ``from conftest import ...`` would get whichever conftest.py pytest imported last
(tests/integration/ has its own), depending on the order the files are collected in."""

import importlib.util
import sys
from pathlib import Path

_NAME = "valorch_tests_conftest"
if _NAME not in sys.modules:
    _spec = importlib.util.spec_from_file_location(
        _NAME, Path(__file__).resolve().parents[1] / "conftest.py"
    )
    sys.modules[_NAME] = importlib.util.module_from_spec(_spec)
    _spec.loader.exec_module(sys.modules[_NAME])

ROOT = sys.modules[_NAME].ROOT
VALORCH = sys.modules[_NAME].VALORCH
run_cli = sys.modules[_NAME].run_cli
