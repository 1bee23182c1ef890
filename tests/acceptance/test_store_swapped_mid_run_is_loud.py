"""The store is the file it was when it was opened (its device and inode), checked before a
run reports: one deleted or replaced while a run writes into it is exit 3 naming it, never
"pass", exit 0 with the results gone with the unlinked file. A host run whose command check
waits while the test deletes or replaces the store, through the real CLI."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import time

import pytest
import yaml

from tests.conftest import VALORCH, run_cli

WAIT = """
import pathlib, sys, time
pathlib.Path(sys.argv[1]).touch()
for _ in range(600):
    if pathlib.Path(sys.argv[2]).exists():
        break
    time.sleep(0.1)
"""


def _runs(db) -> int:
    try:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
        try:
            return conn.execute("SELECT count(*) FROM run").fetchone()[0]
        finally:
            conn.close()
    except sqlite3.Error:
        return 0


@pytest.mark.parametrize("swap", ["deleted", "replaced"])
def test_a_store_swapped_under_a_run_is_exit_3_not_a_pass(tmp_path, swap):
    db = tmp_path / "v.sqlite"
    assert run_cli("db", "upgrade", db=db).returncode == 0  # the store exists before the run
    started, go = tmp_path / "started", tmp_path / "go"
    job = tmp_path / "swap.yaml"
    job.write_text(
        yaml.safe_dump(
            {
                "name": "swap",
                "images": ["host"],
                "suites": [
                    {
                        "name": "command",
                        "commands": [
                            {
                                "id": "waits",
                                "argv": ["python3", "-c", WAIT, str(started), str(go)],
                            }
                        ],
                    }
                ],
            }
        )
    )
    env = {k: v for k, v in os.environ.items() if k != "VALORCH_DB"}
    env["VALORCH_DB"] = str(db)
    proc = subprocess.Popen(
        [VALORCH, "run", "--job", str(job), "--executor", "host", "--no-matrix"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        for _ in range(1200):  # the check runs, and its run is in the store
            if started.exists() and _runs(db) == 1:
                break
            time.sleep(0.1)
        else:
            pytest.fail("the run never started")
        if swap == "deleted":
            for p in (db, db.with_name(db.name + "-wal"), db.with_name(db.name + "-shm")):
                p.unlink(missing_ok=True)
        else:
            copy = tmp_path / "copy.sqlite"
            shutil.copy(db, copy)
            os.replace(copy, db)
        go.touch()
        out, err = proc.communicate(timeout=300)
    finally:
        proc.kill()
    assert proc.returncode == 3, out + err
    assert f"the results database {db} was {swap}" in err, err
    assert "Traceback" not in err
