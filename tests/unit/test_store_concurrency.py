"""Eight real valorch processes write to one fresh SQLite file at once (WAL, busy
timeout, migrations serialised): all succeed, no "database is locked", nothing lost
or duplicated. tests/integration/test_postgres.py does the same on PostgreSQL."""

import json
import sqlite3

from tests.conftest import run_cli, selftest_at_once


def test_eight_concurrent_runs_into_one_database(tmp_path):
    db = tmp_path / "shared.sqlite"
    selftest_at_once("host", db)
    listed = run_cli("results", "list", "--json", db=db)
    assert listed.returncode == 0, listed.stderr
    runs = json.loads(listed.stdout)
    assert len(runs) == 8 and len({r["run"] for r in runs}) == 8
    assert all(r["state"] == "done" and r["counts"] == {"pass": 1, "fail": 1} for r in runs)
    with sqlite3.connect(db) as conn:
        assert conn.execute(
            "SELECT (SELECT count(*) FROM image), (SELECT count(*) FROM host), "
            '(SELECT count(*) FROM "check"), (SELECT count(*) FROM result)'
        ).fetchone() == (1, 1, 2, 16)
