"""Concurrent writers: 8 valorch processes run containers on the real engine and write one
SQLite file at once: every run done, exact result counts, nothing lost or twice, no
container left. (tests/unit/test_store_concurrency.py does the same with the host
executor; tests/integration/test_resume.py kills valorch with SIGKILL and resumes.)"""

import sqlite3

from run_support import containers_of, run_ids_in

from tests.conftest import selftest_at_once


def test_eight_concurrent_docker_runs_into_one_database(tmp_path):
    db = tmp_path / "shared.sqlite"
    selftest_at_once("cpu_debian12_py3.11", db)
    con = sqlite3.connect(db)
    try:
        assert con.execute("SELECT state, COUNT(*) FROM run GROUP BY state").fetchall() == [
            ("done", 8)
        ]
        assert con.execute(
            "SELECT status, COUNT(*) FROM result GROUP BY status ORDER BY 1"
        ).fetchall() == [("fail", 8), ("pass", 8)]
        assert con.execute(
            'SELECT (SELECT COUNT(DISTINCT image_id) FROM run), (SELECT COUNT(*) FROM "check"), '
            "(SELECT COUNT(DISTINCT batch) FROM run)"
        ).fetchone() == (1, 2, 8)
        assert con.execute(
            "SELECT COUNT(*) FROM (SELECT run_id, check_pk, attempt FROM result "
            "GROUP BY 1, 2, 3 HAVING COUNT(*) > 1)"
        ).fetchone() == (0,)
    finally:
        con.close()
    assert containers_of(run_ids_in(db)) == []
