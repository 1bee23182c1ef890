"""SIGKILL valorch mid-run, then `valorch run --resume BATCH`: every task done, the same
number of results as an uninterrupted run, no duplicate, no leftover container."""

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import docker
from run_support import rows, wait_until

ROOT = Path(__file__).resolve().parents[2]
VALORCH = str(Path(sys.executable).with_name("valorch"))

JOB = (
    "name: resume-test\nimages: [cpu_debian12_py3.11_pytorch_1.13, cpu_debian12_py3.11_pytorch_2.13]\n"
    "suites: [smoke, {name: selftest, deadline: 5}]\n"
)


def test_killed_run_resumes_without_loss_or_duplicates(cli, tmp_path):
    job = tmp_path / "job.yaml"
    job.write_text(JOB)
    hosts = tmp_path / "hosts.yaml"
    hosts.write_text(
        "- name: local\n  slots: 1\n"
    )  # one task at a time: the kill lands between tasks' work
    killed_db = tmp_path / "killed.sqlite"
    env = {**os.environ, "VALORCH_DB": str(killed_db)}
    proc = subprocess.Popen(
        [VALORCH, "run", "--job", str(job), "--hosts", str(hosts), "--json", "--no-gate"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_until(
            proc,
            lambda: rows(killed_db, "SELECT 1 FROM result LIMIT 1"),
            "valorch ended before any result was stored",
            tries=600,
            every=0.5,
        )
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait(timeout=60)
    states = dict(rows(killed_db, "SELECT state, COUNT(*) FROM task GROUP BY state"))
    assert states.get("done", 0) >= 1 and sum(states.values()) == 4 and states.get("done") < 4
    ((batch,),) = rows(killed_db, "SELECT DISTINCT batch FROM run")

    res = cli("run", "--resume", batch, "--hosts", str(hosts), "--json", "--no-gate", db=killed_db)
    assert res.returncode == 0, res.stderr[-3000:]
    assert {r["batch"] for r in json.loads(res.stdout)} == {batch}
    assert rows(killed_db, "SELECT DISTINCT state FROM task") == [("done",)]
    assert rows(killed_db, "SELECT DISTINCT state FROM run") == [("done",)]
    dupes = rows(
        killed_db,
        "SELECT run_id, check_pk, attempt FROM result GROUP BY 1, 2, 3 HAVING COUNT(*) > 1",
    )
    assert dupes == []
    run_ids = [r for (r,) in rows(killed_db, "SELECT id FROM run")]
    client = docker.from_env()
    for run_id in run_ids:
        assert (
            client.containers.list(all=True, filters={"label": f"org.valorch.run={run_id}"}) == []
        )

    full = cli(
        "run",
        "--job",
        str(job),
        "--hosts",
        str(hosts),
        "--json",
        "--no-gate",
        db=tmp_path / "full.sqlite",
    )
    assert full.returncode == 0, full.stderr[-3000:]
    count = "SELECT COUNT(*) FROM result"
    assert rows(killed_db, count) == rows(tmp_path / "full.sqlite", count)
    per_check = (
        "SELECT image.alias, check_id, attempt FROM result JOIN run ON result.run_id = run.id "
        'JOIN image ON run.image_id = image.id JOIN "check" ON result.check_pk = "check".id ORDER BY 1, 2, 3'
    )
    assert rows(killed_db, per_check) == rows(tmp_path / "full.sqlite", per_check)
