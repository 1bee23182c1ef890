"""An import's timestamps are converted to UTC (an offset is converted, not dropped),
range-checked (not before valorch's epoch, not in the future) and ordered before anything
is written; `db check` finds rows of an existing store that are not."""

from __future__ import annotations

import json
import sqlite3
import uuid

import pytest


@pytest.fixture
def exported(cli, tmp_path):
    proc = cli("run", "--image", "host", "--suite", "selftest", "--check", "selftest.pass")
    assert proc.returncode == 0, proc.stderr
    run_id = sqlite3.connect(cli.db).execute("SELECT id FROM run").fetchone()[0]
    out = tmp_path / "export.json"
    assert cli("results", "export", run_id, "--out", str(out)).returncode == 0
    return json.loads(out.read_text()), run_id


def _import(cli, tmp_path, doc):
    path = tmp_path / "changed.json"
    path.write_text(json.dumps(doc))
    target = tmp_path / "target.sqlite"
    return cli("results", "import", str(path), db=target), target


@pytest.mark.parametrize(
    ("field", "value", "why"),
    [
        ("started", "0001-01-01T00:00:00+01:00", "range of dates"),
        ("started", "1999-12-31T23:00:00", "not a time a run can have"),
        ("started", "9999-01-01T00:00:00", "not a time a run can have"),
        ("ended", "2021-01-01T00:00:00", "before it started"),
    ],
)
def test_an_import_with_an_impossible_time_writes_nothing(
    cli, tmp_path, exported, field, value, why
):
    doc, _ = exported
    doc["runs"][0][field] = value
    proc, target = _import(cli, tmp_path, doc)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "runs[0]" in proc.stderr and why in proc.stderr, proc.stderr
    assert (
        not target.exists()
        or not sqlite3.connect(target)
        .execute("SELECT name FROM sqlite_master WHERE name = 'run'")
        .fetchone()
        or sqlite3.connect(target).execute("SELECT count(*) FROM run").fetchone() == (0,)
    )


def test_an_offset_is_converted_to_utc(cli, tmp_path, exported):
    doc, _ = exported
    doc["runs"][0]["started"] = "2026-03-01T17:00:00+05:00"
    doc["runs"][0]["ended"] = "2026-03-01T17:30:00+05:00"
    proc, target = _import(cli, tmp_path, doc)
    assert proc.returncode == 0, proc.stderr
    started, ended = sqlite3.connect(target).execute("SELECT started, ended FROM run").fetchone()
    assert started.startswith("2026-03-01 12:00:00") and ended.startswith("2026-03-01 12:30:00")


def test_db_check_finds_impossible_times_in_an_existing_store(cli, exported):
    _, run_id = exported
    con = sqlite3.connect(cli.db)
    con.execute("UPDATE run SET started = '0001-01-01 00:00:00.000000'")
    con.commit()
    con.close()
    proc = cli("db", "check")
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert f"run row id='{run_id}'" in proc.stdout + proc.stderr, proc.stdout + proc.stderr


def test_db_check_names_twenty_rows_of_a_column_and_counts_the_rest(cli, exported):
    _, run_id = exported
    con = sqlite3.connect(cli.db)
    cols = [c[1] for c in con.execute("PRAGMA table_info(run)")]
    others = ", ".join(f'"{c}"' for c in cols if c != "id")
    for _ in range(24):  # fresh ids: none can be the exported run's own
        con.execute(
            f'INSERT INTO run ("id", {others}) SELECT ?, {others} FROM run WHERE id = ?',
            (str(uuid.uuid4()), run_id),
        )
    con.execute("UPDATE run SET started = '0001-01-01 00:00:00.000000'")
    con.commit()
    con.close()
    proc = cli("db", "check")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 3, out
    assert out.count("run row id=") == 20, out
    assert "run: and 5 more row(s) like these" in out, out
