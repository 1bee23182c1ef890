"""Issue 11: 8 valorch processes run containers on the real engine and write one
SQLite file at once: every run done, exact result counts, nothing lost or twice, no
container left. (tests/unit/test_store_concurrency.py does the same with the host
executor; tests/integration/test_resume.py kills valorch with SIGKILL and resumes.)"""

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

from run_support import containers_of, run_ids_in

ROOT = Path(__file__).resolve().parents[2]
VALORCH = str(Path(sys.executable).with_name("valorch"))


def test_eight_concurrent_docker_runs_into_one_database(tmp_path):
    db = tmp_path / "shared.sqlite"
    env = {k: v for k, v in os.environ.items() if k != "VALORCH_DB"}
    argv = [VALORCH, "run", "--image", "cpu_debian12_py3.11", "--suite", "selftest", "--check", "selftest.pass",
            "--check", "selftest.fail", "--no-gate", "--no-matrix", "--db", str(db)]
    procs = [subprocess.Popen(argv, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(8)]
    outs = [p.communicate(timeout=600) for p in procs]
    for p, (_out, err) in zip(procs, outs):
        assert p.returncode == 0, err[-3000:]
        assert "locked" not in err and "Traceback" not in err
    con = sqlite3.connect(db)
    try:
        assert con.execute("SELECT state, COUNT(*) FROM run GROUP BY state").fetchall() == [("done", 8)]
        assert con.execute("SELECT status, COUNT(*) FROM result GROUP BY status ORDER BY 1").fetchall() == [
            ("fail", 8), ("pass", 8)]
        assert con.execute('SELECT (SELECT COUNT(DISTINCT image_id) FROM run), (SELECT COUNT(*) FROM "check"), '
                           "(SELECT COUNT(DISTINCT batch) FROM run)").fetchone() == (1, 2, 8)
        assert con.execute("SELECT COUNT(*) FROM (SELECT run_id, check_pk, attempt FROM result "
                           "GROUP BY 1, 2, 3 HAVING COUNT(*) > 1)").fetchone() == (0,)
    finally:
        con.close()
    assert containers_of(run_ids_in(db)) == []
