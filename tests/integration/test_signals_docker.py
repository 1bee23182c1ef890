"""Interrupts: Ctrl-C (SIGINT) and SIGTERM while a container is in flight. The
container is removed exactly as at a normal end, the runs are `interrupted` with no
result stored, valorch exits 130 / 143, and `--resume` then finishes the batch with
exactly the results of an uninterrupted run. The moment is taken from the engine
(the container just created, in the first wave: before or while the batch's rows are
written), or from the check itself: on a private engine with the holding runtime of
tests/rank_hold.py, the command suite's second check waits for a release that comes only
before `--resume`, and the signal comes once the batch's rows are written too, so it lands
while valorch waits in dispatch for that check on any machine."""

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import dockerd
import pytest
import rank_hold
from run_support import act_when, containers_of, rows, run_ids_in

ROOT = Path(__file__).resolve().parents[2]
VALORCH = str(Path(sys.executable).with_name("valorch"))
# two images, one task at a time: a second container would follow the first
JOB = {
    "name": "signals",
    "images": ["cpu_debian12_py3.11", "cpu_debian11_py3.9"],
    "suites": [
        {
            "name": "command",
            "commands": [
                {"id": "first", "argv": ["true"], "timeout": 60},
                {"id": "slow", "argv": list(rank_hold.WAIT_FOR_RELEASE), "timeout": 60},
            ],
        }
    ],
}


DIR = Path("/tmp/valorch-signals-engine")
HOLD = Path("/tmp/valorch-signals-hold")  # mounted into the engine's probe containers
BRIDGE = "vlch-sig-br0"
IMAGES = ("valorch/base:bookworm", "valorch/base:bullseye")


@pytest.fixture(scope="module")
def engine():
    if not shutil.which("dockerd"):
        pytest.skip("dockerd is needed for a private engine")
    dockerd.stop_stale(DIR)
    rank_hold.arm(HOLD, 0)
    with dockerd.running(DIR, BRIDGE, *rank_hold.runtime(HOLD, DIR), images=IMAGES) as sock:
        yield f"unix://{sock}"


def _container_in(engine, proc, status) -> bool:
    """Whether one of this valorch's containers is in ``status`` on the engine. Found by the
    owner label naming its process (executors/owner.py), not by its runs: a batch's first
    container starts before its runs are stored (services/run), and a signal then is one
    this test must cover; other tests' containers of the same images are not this one's."""
    owners = subprocess.run(
        [
            "docker",
            "-H",
            engine,
            "ps",
            "-a",
            "--filter",
            "label=org.valorch.owner",
            "--filter",
            f"status={status}",
            "--format",
            '{{.Label "org.valorch.owner"}}',
        ],
        capture_output=True,
        text=True,
    ).stdout.split()
    return any(o.count("/") == 3 and o.split("/")[2] == str(proc.pid) for o in owners)


def _dispatching_a_held_check(db) -> bool:
    """Whether valorch waits in dispatch for a task that cannot end: the batch's rows are
    written (both runs, the task in flight marked running: the last row dispatch writes
    before it waits) and command.slow waits for its release. The first wave starts before
    the rows are written (services/batch), so the held check alone is no such moment."""
    return (
        rank_hold.is_held(HOLD)
        and len(run_ids_in(db)) == 2
        and rows(db, "SELECT count(*) FROM task WHERE state = 'running'") == [(1,)]
    )


@pytest.mark.parametrize(
    "sig,code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)], ids=["SIGINT", "SIGTERM"]
)
@pytest.mark.parametrize("moment", ["running", "created"])
def test_signal_removes_the_container_in_flight_and_resume_finishes(
    engine, tmp_path, cli, sig, code, moment
):
    rank_hold.arm(HOLD, 0)
    job = tmp_path / "job.json"
    job.write_text(json.dumps(JOB))
    hosts = tmp_path / "hosts.yaml"
    hosts.write_text(f"- name: local\n  endpoint: {engine}\n  slots: 1\n")
    db = tmp_path / "sig.sqlite"
    env = {k: v for k, v in os.environ.items() if k != "VALORCH_DB"}
    proc = subprocess.Popen(
        [VALORCH, "run", "--job", str(job), "--hosts", str(hosts), "--db", str(db), "--json"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    err = act_when(
        proc,
        (lambda: _dispatching_a_held_check(db))
        if moment == "running"
        else (lambda: _container_in(engine, proc, moment)),
        lambda: proc.send_signal(sig),
        "valorch ended before a container was " + moment,
        timeout=120,
        tries=1200,
    )
    assert proc.returncode == code, err[-3000:]
    assert "Traceback" not in err
    run_ids = run_ids_in(db)
    assert len(run_ids) == 2
    assert (
        containers_of(run_ids, engine) == []
    )  # nothing left, in any state (running, exited, created)
    assert rows(db, "SELECT DISTINCT state FROM run") == [("interrupted",)]
    assert rows(db, "SELECT COUNT(*) FROM result") == [(0,)]  # the task in flight stored nothing
    assert ("done",) not in rows(db, "SELECT DISTINCT state FROM task")
    ((batch,),) = rows(db, "SELECT DISTINCT batch FROM run")

    rank_hold.release(HOLD)  # the resumed command.slow passes at once
    res = cli("run", "--resume", batch, "--hosts", str(hosts), "--json", db=db)
    assert res.returncode == 0, res.stderr[-3000:]
    assert rows(db, "SELECT DISTINCT state FROM run") == [("done",)]
    assert rows(db, "SELECT DISTINCT state FROM task") == [("done",)]
    # exactly the results of an uninterrupted run: 2 images x 2 checks, once each
    assert rows(db, "SELECT status, COUNT(*) FROM result GROUP BY status") == [("pass", 4)]
    assert rows(
        db,
        "SELECT COUNT(*) FROM (SELECT run_id, check_pk, attempt FROM result "
        "GROUP BY 1, 2, 3 HAVING COUNT(*) > 1)",
    ) == [(0,)]
    assert containers_of(run_ids_in(db), engine) == []
