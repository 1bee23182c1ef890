"""The README's ten-minute tour runs as written, in its order, on the local interpreter: each
command of its first shell block (``make run`` as the job it runs, RUN_ID as the run the
list shows, output directories under the test's own folder) ends as the tour says."""

from __future__ import annotations

import json
import re
import shlex
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from conftest import ROOT, run_cli


def tour_commands() -> list[list[str]]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## A ten-minute tour", 1)[1]
    block = re.search(r"```sh\n(.*?)```", section, re.S).group(1)
    commands = []
    for line in block.splitlines():
        code = line.split("#", 1)[0].strip()
        if code:
            commands.append(shlex.split(code))
    return commands


def test_the_tour_runs_as_written(tmp_path):
    db = tmp_path / "valorch.sqlite"
    commands = tour_commands()
    assert commands[0] == ["make", "run"] and commands[1][:3] == ["valorch", "results", "list"]
    run_id = ""
    for argv in commands:
        if argv == ["make", "run"]:  # the Makefile's run target, in the test's environment
            argv = ["valorch", "run", "--job", "jobs/smoke.yaml"]
        assert argv[0] == "valorch", argv
        args = [run_id if a == "RUN_ID" else a for a in argv[1:]]
        args = [str(tmp_path / a) if a.startswith("results/") else a for a in args]
        done = run_cli(*args, db=db)
        assert done.returncode == 0, (argv, done.stdout[-2000:], done.stderr[-2000:])
        assert "Traceback" not in done.stderr
        if args[:2] == ["results", "list"]:
            listed = run_cli("results", "list", "--json", db=db)
            run_id = json.loads(listed.stdout)[0]["run"]
    assert (tmp_path / "results" / "qualify-1" / "qualify.json").is_file()
    assert (tmp_path / "results" / "site" / "index.html").is_file()
