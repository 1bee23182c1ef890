"""tests/needs.py marks a test by what its code refers to: the console script (run_cli,
VALORCH, selftest_at_once, the cli fixture) followed through the helpers of tests/ it calls,
and PyTorch imported in this interpreter."""

import needs


def _runs_the_console_script():
    from conftest import run_cli

    return run_cli("--version")


def _calls_a_helper_that_runs_it():
    return _runs_the_console_script()


def _imports_torch():
    import torch

    return torch.__version__


def _pure():
    return sorted({3, 1, 2})


def test_a_helper_two_calls_away_is_followed():
    assert needs.names_used([_calls_a_helper_that_runs_it]) & needs.CLI_NAMES == {"run_cli"}


def test_torch_imported_inside_a_function_is_seen():
    assert needs.names_used([_imports_torch]) & needs.TORCH_NAMES == {"torch"}


def test_pure_code_needs_nothing():
    used = needs.names_used([_pure])
    assert not used & (needs.CLI_NAMES | needs.TORCH_NAMES)
    assert "sorted" in used


def test_functions_outside_tests_are_not_followed():
    """The orchestrator's own functions are the code under test, not a need."""
    from orchestrator.imageref import parse

    assert needs.names_used([parse]) == set()
