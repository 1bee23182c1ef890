"""The standard streams as the environment gives them, handled once at the CLI's edge
(cli.main) for every command: an encoding that cannot show valorch's symbols
(``PYTHONIOENCODING=ascii``) shows ``?`` instead of a UnicodeEncodeError traceback, and a
closed stdout (``>&-``) or stderr makes the output go nowhere, quietly, with the command's
own exit code. Several commands through the real console script."""

from __future__ import annotations

import json
import os
import shlex
import subprocess

import pytest

from tests.conftest import VALORCH, run_cli


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    db = tmp_path_factory.mktemp("streams") / "v.sqlite"
    done = run_cli(
        "run", "--image", "host", "--suite", "selftest", "--check", "selftest.pass",
        "--executor", "host", "--no-matrix", db=db,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    run_id = json.loads(run_cli("results", "list", "--json", db=db).stdout)[0]["run"]
    return db, run_id


def _commands(run_id):
    return [["matrix", "render"], ["results", "show", run_id], ["--help"]]


def test_an_ascii_terminal_gets_question_marks_not_a_traceback(store):
    db, run_id = store
    shown = {}
    for argv in _commands(run_id):
        done = run_cli(*argv, db=db, env={"PYTHONIOENCODING": "ascii"})
        assert done.returncode == 0, (argv, done.stderr)
        assert "Traceback" not in done.stderr and "UnicodeEncodeError" not in done.stderr
        shown[argv[0]] = done.stdout
    assert "selftest.pass" in shown["matrix"] and "?" in shown["matrix"]  # ✅ shown as ?


def _closed(argv, db, which=">&-"):
    env = {k: v for k, v in os.environ.items() if k != "VALORCH_DB"}
    env["VALORCH_DB"] = str(db)
    line = " ".join(shlex.quote(a) for a in [VALORCH, *argv])
    return subprocess.run(
        ["bash", "-c", f"{line} {which}"], capture_output=True, text=True, env=env, timeout=120
    )


def test_a_closed_stdout_is_quiet_with_the_commands_own_exit_code(store):
    db, run_id = store
    for argv in _commands(run_id):
        done = _closed(argv, db)
        assert done.returncode == 0, (argv, done.stderr)
        assert "Traceback" not in done.stderr, (argv, done.stderr)
    bad = _closed(["results", "show", "no-such-run"], db)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr, bad.stderr
    assert "no-such-run" in bad.stderr  # the error still reaches stderr


def test_closed_stdout_and_stderr_together_keep_the_exit_code(store):
    db, _ = store
    assert _closed(["results", "list"], db, ">&- 2>&-").returncode == 0
