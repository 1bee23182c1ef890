# The corpus's files are inputs (workloads among them), not tests of this project.
collect_ignore_glob = ["files/*"]

from pathlib import Path


# Test modules of other directories do `from conftest import ROOT, VALORCH, run_cli`; pytest
# registers each directory's conftest.py under the one module name "conftest", so whichever
# was imported last answers: every conftest re-exports the root conftest's helpers.
def _root_conftest():
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "_valorch_root_conftest", Path(__file__).resolve().parents[1] / "conftest.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_ROOT_CONFTEST = _root_conftest()
ROOT, VALORCH, run_cli = _ROOT_CONFTEST.ROOT, _ROOT_CONFTEST.VALORCH, _ROOT_CONFTEST.run_cli
