"""tests/conftest.py's helpers (run_cli, ROOT, VALORCH, ensure_fake_rocm), loaded by path,
once: pytest registers each directory's conftest.py under the one module name "conftest", so
``from conftest import ...`` gets whichever conftest.py pytest imported last, depending on
the order the files are collected in. Test modules import them from here (or from
``conftest``, which every conftest.py answers by re-exporting these)."""

import importlib.util
import sys
from pathlib import Path

_NAME = "valorch_tests_conftest"
if _NAME not in sys.modules:
    _spec = importlib.util.spec_from_file_location(
        _NAME, Path(__file__).resolve().parent / "conftest.py"
    )
    sys.modules[_NAME] = importlib.util.module_from_spec(_spec)
    _spec.loader.exec_module(sys.modules[_NAME])

ROOT = sys.modules[_NAME].ROOT
VALORCH = sys.modules[_NAME].VALORCH
run_cli = sys.modules[_NAME].run_cli
FAKE_ROCM = sys.modules[_NAME].FAKE_ROCM
ensure_fake_rocm = sys.modules[_NAME].ensure_fake_rocm
