# The corpus's files are inputs (workloads among them), not tests of this project.
collect_ignore_glob = ["files/*"]


# Test modules of other directories do `from conftest import ROOT, VALORCH, run_cli`, and
# whichever conftest.py was imported last answers (tests/root_helpers.py says why).
from root_helpers import ROOT, VALORCH, run_cli  # noqa: F401 - re-exported
