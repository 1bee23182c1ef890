"""An engine outage: the engine goes away mid-run (SIGTERM to dockerd) and comes back.
The batch ends with exit 3 and its tasks in infrastructure error, storing nothing
half-way; `valorch run --resume` after the restart re-runs exactly those tasks: the
batch then holds the results of an uninterrupted run, none twice.

The engine is a PRIVATE dockerd this test starts, stops and restarts (its own socket,
data root, exec root, pid file and bridge); the shared engine is never touched. It runs its
containers through the holding runtime of tests/rank_hold.py: the command suite's second
check waits for a release that comes only after the restart, so the engine stops while that
check runs on any machine."""

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import rank_hold
from run_support import act_when, rows

ROOT = Path(__file__).resolve().parents[2]
VALORCH = str(Path(sys.executable).with_name("valorch"))
BASE = Path("/tmp/valorch-d4")
BRIDGE = "vlch-d4br0"
HOLD = Path("/tmp/valorch-d4-hold")  # mounted into the engine's probe containers
IMAGE = "valorch/base:bookworm"
JOB = {
    "name": "outage",
    "images": ["cpu_debian12_py3.11"],
    "suites": [
        {
            "name": "command",
            "commands": [
                {"id": "first", "argv": ["true"], "timeout": 60},
                {"id": "slow", "argv": list(rank_hold.WAIT_FOR_RELEASE), "timeout": 60},
            ],
        },
        {"name": "selftest", "checks": ["selftest.pass", "selftest.fail"]},
    ],
}


class Engine:
    def __init__(self) -> None:
        self.sock = BASE / "docker.sock"
        self.proc = None
        self.runtime = rank_hold.runtime(HOLD, BASE)

    def docker(self, *args, **kw):
        return subprocess.run(
            ["docker", "-H", f"unix://{self.sock}", *args], capture_output=True, text=True, **kw
        )

    def start(self) -> None:
        with open(BASE / "dockerd.log", "a") as log:
            self.proc = subprocess.Popen(
                [
                    "dockerd",
                    "--host",
                    f"unix://{self.sock}",
                    *self.runtime,
                    "--data-root",
                    str(BASE / "data"),
                    "--exec-root",
                    str(BASE / "exec"),
                    "--pidfile",
                    str(BASE / "docker.pid"),
                    f"--bridge={BRIDGE}",
                    "--iptables=false",
                    "--ip-masq=false",
                ],
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        for _ in range(240):
            if self.docker("version").returncode == 0:
                return
            if self.proc.poll() is not None:
                pytest.fail(f"private dockerd exited: {(BASE / 'dockerd.log').read_text()[-2000:]}")
            time.sleep(0.25)
        pytest.fail("private dockerd did not answer")

    def stop(self) -> None:
        """SIGTERM, as an operator's `systemctl stop docker` sends it; waits for the exit."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


@pytest.fixture
def engine():
    if not shutil.which("dockerd"):
        pytest.skip("dockerd is needed for a private engine")
    if (BASE / "docker.pid").exists():  # a previous session's engine that was not stopped
        try:
            os.kill(int((BASE / "docker.pid").read_text()), signal.SIGTERM)
            time.sleep(3)
        except (ProcessLookupError, ValueError):
            pass
    BASE.mkdir(parents=True, exist_ok=True)
    subprocess.run(["ip", "link", "add", BRIDGE, "type", "bridge"], capture_output=True)
    rank_hold.arm(HOLD, 0)
    eng = Engine()
    eng.start()
    try:
        if eng.docker("image", "inspect", IMAGE).returncode != 0:
            subprocess.run(
                f"docker save {IMAGE} | docker -H unix://{eng.sock} load",
                shell=True,
                check=True,
                capture_output=True,
            )
        yield eng
    finally:
        eng.stop()
        subprocess.run(["ip", "link", "delete", BRIDGE], capture_output=True)


def test_engine_stopped_mid_run_then_resumed_without_loss_or_duplicates(engine, tmp_path):
    job = tmp_path / "job.json"
    job.write_text(json.dumps(JOB))
    hosts = tmp_path / "hosts.yaml"
    hosts.write_text(
        f"hosts:\n  - name: private\n    endpoint: unix://{engine.sock}\n    slots: 1\n"
    )
    db = tmp_path / "outage.sqlite"
    env = {k: v for k, v in os.environ.items() if k != "VALORCH_DB"}
    argv = [
        VALORCH,
        "run",
        "--job",
        str(job),
        "--hosts",
        str(hosts),
        "--db",
        str(db),
        "--json",
        "--no-gate",
        "--pull",
        "never",
    ]
    proc = subprocess.Popen(
        argv, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )

    # the moment: command.first has reported and command.slow waits for its release, which
    # comes only after the restart, and the batch's rows are written (the task in flight
    # marked running: the first wave starts before the rows, services/batch), so valorch
    # waits in dispatch for a task that cannot end
    err = act_when(
        proc,
        lambda: (
            rank_hold.is_held(HOLD)
            and rows(db, "SELECT count(*) FROM task WHERE state = 'running'") == [(1,)]
        ),
        engine.stop,
        "valorch ended before the engine could be stopped",
        tries=10**6,
    )
    assert proc.returncode == 3, err[-3000:]
    assert "Traceback" not in err
    states = dict(rows(db, "SELECT state, COUNT(*) FROM task GROUP BY state"))
    assert states == {"error": 2}, states  # both tasks: the one in flight, the one queued behind it
    assert rows(db, "SELECT COUNT(*) FROM result") == [(0,)]  # nothing stored half-way
    assert rows(db, "SELECT DISTINCT state FROM run") == [("error",)]
    # every suite that never reported says why: infrastructure (triage: docs/site.md, "Why a check is red")
    assert rows(db, "SELECT subject, cls FROM triage ORDER BY subject") == [
        ("suite command", "infrastructure"),
        ("suite selftest", "infrastructure"),
    ]

    engine.start()
    rank_hold.release(HOLD)  # the resumed command.slow passes at once
    ((batch,),) = set(rows(db, "SELECT batch FROM run"))
    res = subprocess.run(
        [
            VALORCH,
            "run",
            "--resume",
            batch,
            "--hosts",
            str(hosts),
            "--db",
            str(db),
            "--json",
            "--no-gate",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert res.returncode == 0, res.stderr[-3000:]
    assert rows(db, "SELECT state, COUNT(*) FROM task GROUP BY state") == [("done", 2)]
    assert rows(db, "SELECT DISTINCT state FROM run") == [("done",)]
    got = rows(
        db,
        'SELECT c.check_id, r.status, COUNT(*) FROM result r JOIN "check" c ON c.id = r.check_pk '
        "GROUP BY 1, 2 ORDER BY 1",
    )
    assert got == [
        ("command.first", "pass", 1),
        ("command.slow", "pass", 1),
        ("selftest.fail", "fail", 1),
        ("selftest.pass", "pass", 1),
    ]
    assert rows(db, "SELECT subject, cls FROM triage") == [
        ("selftest.fail", "new check")
    ]  # decided again
    assert engine.docker("ps", "-aq", "--filter", "label=org.valorch").stdout.split() == []
