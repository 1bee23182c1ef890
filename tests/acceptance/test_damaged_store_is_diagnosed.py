"""A store damaged below the page level (a dropped table or column, a stored value that
does not parse) is exit 3 "damaged store: …" naming the damage and what to do, from every
command that meets it; `valorch db check` lists every problem; `run` never starts on it."""

from __future__ import annotations

import shutil
import sqlite3

import pytest
from conftest import run_cli

DAMAGE = {
    "dropped table": ("PRAGMA foreign_keys=off; DROP TABLE result;", "table 'result' is missing"),
    "dropped column": ("ALTER TABLE run DROP COLUMN meta;", "column 'run.meta' is missing"),
    "meta not json": (
        "UPDATE run SET meta = '{not json';",
        "run.meta holds '{not json', which is not JSON",
    ),
    "started garbage": (
        "UPDATE run SET started = 'garbage';",
        "run.started holds 'garbage', which is not a date/time",
    ),
    "timings not json": (
        "UPDATE task SET timings = '{bad';",
        "task.timings holds '{bad', which is not JSON",
    ),
    # read raw by the site (the driver's cursor), through the column type by results show
    "samples not floats": (
        "UPDATE result SET samples = X'0102030405';",
        "result.samples holds b'\\x01\\x02\\x03\\x04\\x05', which is not a sample array",
    ),
    "metrics a list": (
        "UPDATE result SET metrics = '[1, 2]', samples = X'000000000000F03F000000000000F03F"
        "000000000000F03F';",
        "result.metrics holds '[1, 2]', which is not a JSON object",
    ),
}


@pytest.fixture(scope="module")
def healthy(tmp_path_factory):
    db = tmp_path_factory.mktemp("store") / "base.sqlite"
    proc = run_cli(
        "run", "--image", "host", "--suite", "selftest", "--check", "selftest.pass", "--db", str(db)
    )
    assert proc.returncode == 0, proc.stderr
    run_id = sqlite3.connect(db).execute("SELECT id FROM run").fetchone()[0]
    return db, run_id


def _damaged(healthy, tmp_path, damage):
    db = tmp_path / "damaged.sqlite"
    shutil.copy(healthy[0], db)
    conn = sqlite3.connect(db)
    conn.executescript(DAMAGE[damage][0])
    conn.close()
    return db


def _commands(run_id):
    return {
        "dropped table": [
            ("results", "list"),
            ("results", "show", run_id),
            ("matrix", "render"),
            ("site", "build"),
        ],
        "dropped column": [("results", "list"), ("results", "show", run_id), ("matrix", "render")],
        # the matrix reads no run.meta (its evidence is runs, tasks and results): it meets no damage
        "meta not json": [("results", "show", run_id), ("site", "build")],
        "started garbage": [("results", "list"), ("matrix", "render"), ("site", "build")],
        "timings not json": [
            ("run", "--image", "host", "--suite", "selftest", "--check", "selftest.pass")
        ],
        "samples not floats": [("results", "show", run_id), ("site", "build")],
        "metrics a list": [("site", "build")],
    }


@pytest.mark.parametrize("damage", list(DAMAGE))
def test_every_command_meeting_the_damage_exits_3_naming_it(healthy, tmp_path, damage):
    db = _damaged(healthy, tmp_path, damage)
    for argv in _commands(healthy[1])[damage]:
        extra = ("--out", str(tmp_path / "site")) if argv[0] == "site" else ()
        proc = run_cli(*argv, *extra, "--db", str(db))
        assert proc.returncode == 3, (argv, proc.stderr)
        assert "Traceback" not in proc.stderr
        assert "damaged store: " in proc.stderr and DAMAGE[damage][1] in proc.stderr, (
            argv,
            proc.stderr,
        )
        assert "valorch db check" in proc.stderr  # what to do


@pytest.mark.parametrize("damage", ["dropped table", "dropped column", "timings not json"])
def test_run_on_a_damaged_store_leaves_no_half_run(healthy, tmp_path, damage):
    db = _damaged(healthy, tmp_path, damage)
    before = db.read_bytes()
    proc = run_cli(
        "run", "--image", "host", "--suite", "selftest", "--check", "selftest.pass", "--db", str(db)
    )
    assert (
        proc.returncode == 3 and "damaged store: " in proc.stderr and "Traceback" not in proc.stderr
    )
    assert DAMAGE[damage][1] in proc.stderr
    assert sqlite3.connect(db).execute("SELECT count(*) FROM run").fetchone()[0] == 1
    assert db.read_bytes() == before


def test_db_check_reports_every_problem_with_its_row(healthy, tmp_path):
    db = tmp_path / "many.sqlite"
    shutil.copy(healthy[0], db)
    conn = sqlite3.connect(db)
    conn.executescript(
        "UPDATE run SET meta = '{not json', started = 'garbage'; PRAGMA foreign_keys=off; "
        "DROP TABLE baseline;"
    )
    conn.close()
    proc = run_cli("db", "check", "--db", str(db))
    assert proc.returncode == 3, proc.stderr
    run_id = healthy[1]
    assert "table 'baseline' is missing" in proc.stderr
    assert f"run row id='{run_id}': run.started holds 'garbage'" in proc.stderr
    assert f"run row id='{run_id}': run.meta holds '{{not json'" in proc.stderr
    assert "damaged store: " in proc.stderr and "3 problem(s)" in proc.stderr
    proc = run_cli("db", "check", "--db", str(healthy[0]))
    assert proc.returncode == 0 and "no problem found" in proc.stderr
    proc = run_cli("db", "check", "--json", "--db", str(db))
    import json

    assert len(json.loads(proc.stdout)["problems"]) == 3


def test_site_build_on_garbage_result_pages_names_the_damage(healthy, tmp_path):
    """The site reads every result on the driver's own cursor: a garbage page met there is
    the same exit 3 as anywhere else, not the driver's traceback, and no site is written."""
    db = tmp_path / "garbage-pages.sqlite"
    shutil.copy(healthy[0], db)
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    size = conn.execute("PRAGMA page_size").fetchone()[0]
    roots = [r for (r,) in conn.execute("SELECT rootpage FROM sqlite_master WHERE name = 'result'")]
    conn.close()
    data = bytearray(db.read_bytes())
    for root in roots:
        data[(root - 1) * size : root * size] = b"\xab" * size
    db.write_bytes(bytes(data))
    proc = run_cli("site", "build", "--db", str(db), "--out", str(tmp_path / "site"))
    assert proc.returncode == 3, proc.stderr
    assert "is damaged" in proc.stderr and "Traceback" not in proc.stderr
    assert not (tmp_path / "site").exists()
