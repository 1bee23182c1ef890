"""A full disk: the results database on a 3 MiB tmpfs that fills up. Before a run
and mid-run, `valorch run` exits 3 naming the database and its free space (no
traceback), --junit is still written; mid-run, the results already measured are
spilled and `valorch run --resume` imports them: nothing lost, nothing twice."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from run_support import act_when, containers_of, rows, run_ids_in

ROOT = Path(__file__).resolve().parents[2]
VALORCH = str(Path(sys.executable).with_name("valorch"))
JOB = {
    "name": "diskfull",
    "images": ["cpu_debian12_py3.11", "cpu_debian11_py3.9"],
    "suites": [
        {
            "name": "command",
            "commands": [
                {"id": "first", "argv": ["true"], "timeout": 60},
                {"id": "slow", "argv": ["sleep", "4"], "timeout": 60},
            ],
        }
    ],
}


@pytest.fixture
def tiny_disk(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    mnt = tmp_path / "full"
    mnt.mkdir()
    subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", str(mnt)], check=True
    )  # a run's WAL peaks near 2.5 MiB
    yield mnt
    subprocess.run(["umount", "-l", str(mnt)], check=False)


def _fill(mnt):
    with open(mnt / "fill", "wb") as fh:
        try:
            while True:
                fh.write(b"\0" * 65536)
                fh.flush()
        except OSError:
            pass


def _env(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "VALORCH_DB"}
    env["VALORCH_SPILL_DIR"] = str(tmp_path / "spill")
    return env


def test_full_before_a_run_is_exit_3_naming_the_database(tiny_disk, tmp_path):
    _fill(tiny_disk)
    db, junit = tiny_disk / "v.sqlite", tmp_path / "out.junit.xml"
    proc = subprocess.run(
        [
            VALORCH,
            "run",
            "--image",
            "cpu_debian12_py3.11",
            "--suite",
            "selftest",
            "--check",
            "selftest.pass",
            "--db",
            str(db),
            "--junit",
            str(junit),
        ],
        cwd=ROOT,
        env=_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 3, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr
    assert f"the disk of the results database {db} is full (0.0 MiB free of 3.0 MiB)" in proc.stderr
    assert 'errors="1"' in junit.read_text() and "is full" in junit.read_text()


def test_full_mid_run_spills_and_resume_imports_exactly_once(tiny_disk, tmp_path):
    job = tmp_path / "job.json"
    job.write_text(json.dumps(JOB))
    hosts = tmp_path / "hosts.yaml"
    hosts.write_text("- name: local\n  slots: 1\n")  # one task at a time
    db, env = tiny_disk / "v.sqlite", _env(tmp_path)
    proc = subprocess.Popen(
        [
            VALORCH,
            "run",
            "--job",
            str(job),
            "--hosts",
            str(hosts),
            "--db",
            str(db),
            "--json",
            "--junit",
            str(tmp_path / "j.xml"),
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    err = act_when(
        proc,
        lambda: (
            dict(rows(db, "SELECT state, COUNT(*) FROM task GROUP BY state"))
            == {"done": 1, "running": 1}
        ),  # the first task stored, the second one measuring
        lambda: _fill(tiny_disk),
        "valorch ended before the disk could fill",
    )
    assert proc.returncode == 3, err[-3000:]
    assert "Traceback" not in err
    assert f"the disk of the results database {db} is full" in err and "MiB free of 3.0 MiB" in err
    assert f"spilled to {tmp_path / 'spill'}" in err  # beside the database there is no room
    spilled = list((tmp_path / "spill").glob("*.json"))
    assert len(spilled) == 1
    assert rows(db, "SELECT COUNT(*) FROM result") == [(2,)]  # the first task's, once
    assert containers_of(run_ids_in(db)) == []
    assert "is full" in (tmp_path / "j.xml").read_text()

    (tiny_disk / "fill").unlink()
    subprocess.run(["mount", "-o", "remount,size=16m", str(tiny_disk)], check=True)  # room made
    ((batch,),) = set(rows(db, "SELECT batch FROM run"))
    res = subprocess.run(
        [VALORCH, "run", "--resume", batch, "--hosts", str(hosts), "--db", str(db), "--json"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert res.returncode == 0, res.stderr[-3000:]
    assert rows(db, "SELECT state, COUNT(*) FROM task GROUP BY state") == [("done", 2)]
    assert rows(db, "SELECT DISTINCT state FROM run") == [("done",)]
    # 2 images x 2 checks, each once: the spilled task was imported, not re-run
    assert rows(db, "SELECT status, COUNT(*) FROM result GROUP BY status") == [("pass", 4)]
    assert rows(db, "SELECT tries FROM task") == [(1,), (1,)]  # neither task ran again
    assert rows(
        db,
        "SELECT COUNT(*) FROM (SELECT run_id, check_pk, attempt FROM result "
        "GROUP BY 1, 2, 3 HAVING COUNT(*) > 1)",
    ) == [(0,)]
    assert list((tmp_path / "spill").glob("*.json")) == []
    res = subprocess.run(
        [VALORCH, "run", "--resume", batch, "--hosts", str(hosts), "--db", str(db), "--json"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert res.returncode == 0 and rows(db, "SELECT COUNT(*) FROM result") == [
        (4,)
    ]  # resuming again adds nothing


def test_db_check_on_a_full_disk_names_the_disk_not_damage(tiny_disk, tmp_path):
    """A store that is fine on a disk that filled up afterwards: `db check` says the disk is
    full and where (SQLite reports it as "disk I/O error" creating its -wal file), never
    "damaged store … restore it from a backup"."""
    db = tiny_disk / "v.sqlite"
    argv = [VALORCH, "run", "--image", "host", "--suite", "selftest", "--check", "selftest.pass"]
    seeded = subprocess.run(
        [*argv, "--db", str(db), "--no-matrix"],
        capture_output=True,
        text=True,
        env=_env(tmp_path),
        cwd=ROOT,
    )
    assert seeded.returncode == 0, seeded.stderr
    for side in (tiny_disk / "v.sqlite-wal", tiny_disk / "v.sqlite-shm"):
        side.unlink(missing_ok=True)
    _fill(tiny_disk)
    proc = subprocess.run(
        [VALORCH, "db", "check", "--db", str(db)],
        capture_output=True,
        text=True,
        env=_env(tmp_path),
        cwd=ROOT,
    )
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert f"the disk of the results database {db} is full" in proc.stderr, proc.stderr
    assert "damaged" not in proc.stdout + proc.stderr and "backup" not in proc.stderr
    assert "Traceback" not in proc.stderr
