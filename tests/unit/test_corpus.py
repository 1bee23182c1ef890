"""The bad-input corpus (tests/corpus/cases.yaml): every case through the real CLI.

In process: the typer app exactly as the console script calls it (``App.__call__``, the
one ValorchError handler), stdout/stderr captured, a fresh workspace per case. A handful
also through the installed ``valorch`` script (a subprocess, ~0.6 s each). Each asserts
the exit code, no traceback, the message names what it should, and that no file of the
workspace (database, catalog, inputs) changed.
"""

import sys
from collections import Counter
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "corpus"))
import harness

CASES = harness.load_cases()


@pytest.fixture(scope="module")
def seed(tmp_path_factory):
    directory = tmp_path_factory.mktemp("corpus-seed")
    _, run_id = harness.make_seed(directory)
    return directory, run_id


def _params():
    for case in CASES:
        marks = [pytest.mark.docker] if case.get("docker") else []
        yield pytest.param(case, id=case["id"], marks=marks)


@pytest.mark.parametrize("case", list(_params()))
def test_bad_input_is_a_clean_error(case, seed, tmp_path):
    ws = harness.Workspace.create(tmp_path / "ws", *seed)
    problems = harness.run_case(case, ws)
    assert not problems, "\n".join(problems)


# one of each kind of file, a database and a flag, through the installed console script
REAL = [
    "job-non-utf8",
    "catalog-dup-components",
    "hosts-bad-date",
    "known-issues-bad-date",
    "import-status-exploded",
    "import-rst-broken-link",
    "db-corrupt-rows-results-list",
    "flag-timeout-huge",
    "job-pytest-etc-shadow",
]


@pytest.mark.parametrize("case_id", REAL)
def test_bad_input_through_the_console_script(case_id, seed, tmp_path):
    case = next(c for c in CASES if c["id"] == case_id)
    ws = harness.Workspace.create(tmp_path / "ws", *seed)
    problems = harness.run_case(case, ws, subprocess_=True)
    assert not problems, "\n".join(problems)


def test_corpus_covers_every_input_the_cli_reads():
    assert len(CASES) >= 110
    assert len({c["id"] for c in CASES}) == len(CASES)
    kinds = Counter(c["id"].split("-", 1)[0] for c in CASES)
    for kind in ("job", "catalog", "hosts", "known", "import", "db", "flag", "tier"):
        assert kinds[kind] >= 3, kinds
    assert any(c["id"].startswith("import-rst") for c in CASES)
    assert all(c["exit"] in (0, 2, 3) for c in CASES)
