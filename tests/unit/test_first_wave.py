"""A batch's first wave starts before its rows are written (services/run): the probe runs
while the recorder loads and the batch's rows are written, with the run ids the launch
gave. Real CLI, real host executor, real SQLite file; a subprocess each."""

import json
import sqlite3
import subprocess
import sys

SCRIPT = """
import atexit, json, sqlite3, sys
from orchestrator.executors import host

DB = sys.argv[1]
seen = {}
real = host.HostExecutor.execute

def execute(self, task, run_id, on_result=None, on_started=None):
    with sqlite3.connect(DB) as conn:
        rows = conn.execute("SELECT COUNT(*) FROM run WHERE id = ?", (run_id,)).fetchone()[0]
    seen.setdefault("rows_when_started", rows)
    seen.setdefault("run_id", run_id)
    return real(self, task, run_id, on_result, on_started)

host.HostExecutor.execute = execute
atexit.register(lambda: sys.stderr.write("SEEN " + json.dumps(seen) + "\\n"))
sys.argv = ["valorch", "run", "--image", "host", "--check", "env.*", "--no-matrix", "--json", "--db", DB]
from orchestrator.cli import main
main()
"""


def _run(db) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(db)], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    seen = [line for line in done.stderr.splitlines() if line.startswith("SEEN ")]
    return {**json.loads(seen[-1][5:]), "json": json.loads(done.stdout)}


def test_the_first_wave_starts_before_its_rows_are_written_and_they_follow(tmp_path):
    db = tmp_path / "v.sqlite"
    first = _run(db)  # no file yet: the store is created (migrated) before anything runs
    second = _run(db)  # a file at this valorch's schema
    assert first["rows_when_started"] == 0 and second["rows_when_started"] == 0
    with sqlite3.connect(db) as conn:
        runs = dict(conn.execute("SELECT id, state FROM run").fetchall())
        tasks = conn.execute(
            "SELECT run_id, state, tries, started IS NOT NULL FROM task ORDER BY id"
        ).fetchall()
        results = conn.execute(
            "SELECT COUNT(*) FROM result WHERE run_id = ?", (second["run_id"],)
        ).fetchone()[0]
    assert runs == {first["run_id"]: "done", second["run_id"]: "done"}  # the ids the launches gave
    assert tasks == [(first["run_id"], "done", 1, 1), (second["run_id"], "done", 1, 1)]
    assert results > 0 and [r["run"] for r in second["json"]] == [second["run_id"]]
