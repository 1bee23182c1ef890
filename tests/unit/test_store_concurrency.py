"""Eight real valorch processes write to one fresh SQLite file at once (WAL, busy
timeout, migrations serialised): all succeed, no "database is locked", nothing lost
or duplicated. tests/integration/test_postgres.py does the same on PostgreSQL."""

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
VALORCH = str(Path(sys.executable).with_name("valorch"))


def test_eight_concurrent_runs_into_one_database(tmp_path):
    db = tmp_path / "shared.sqlite"
    env = {k: v for k, v in os.environ.items() if k != "VALORCH_DB"}
    argv = [VALORCH, "run", "--image", "host", "--suite", "selftest", "--check", "selftest.pass",
            "--check", "selftest.fail", "--no-gate", "--no-matrix", "--db", str(db)]
    procs = [subprocess.Popen(argv, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(8)]
    outs = [p.communicate(timeout=600) for p in procs]
    for p, (_out, err) in zip(procs, outs):
        assert p.returncode == 0, err
        assert "locked" not in err and "Traceback" not in err
    listed = subprocess.run([VALORCH, "results", "list", "--json", "--db", str(db)], capture_output=True, text=True,
                            cwd=ROOT, env=env, check=True)
    runs = json.loads(listed.stdout)
    assert len(runs) == 8 and len({r["run"] for r in runs}) == 8
    assert all(r["state"] == "done" and r["counts"] == {"pass": 1, "fail": 1} for r in runs)
    with sqlite3.connect(db) as conn:
        assert conn.execute('SELECT (SELECT count(*) FROM image), (SELECT count(*) FROM host), '
                            '(SELECT count(*) FROM "check"), (SELECT count(*) FROM result)').fetchone() == (1, 1, 2, 16)
