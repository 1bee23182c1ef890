"""Ctrl-C in the middle of a batch says how to finish it: "interrupted; resume with
`valorch run --resume BATCH`", with the batch the store holds as interrupted, and that
command finishes it. On the local interpreter (``--image host``): no engine needed."""

import os
import re
import signal
import sqlite3
import subprocess
import time

from root_helpers import ROOT, VALORCH


def _runs(db):
    if not db.exists():
        return []
    try:
        with sqlite3.connect(db) as conn:
            return conn.execute("SELECT batch, state FROM run").fetchall()
    except sqlite3.Error:  # the schema is being created
        return []


def test_ctrl_c_prints_the_resume_command(tmp_path, cli):
    db = tmp_path / "int.sqlite"
    env = {k: v for k, v in os.environ.items() if k != "VALORCH_DB"}
    proc = subprocess.Popen(
        [
            VALORCH,
            "run",
            "--image",
            "host",
            "--suite",
            "selftest",
            "--check",
            "selftest.hang",
            "--deadline",
            "20",
            "--no-matrix",
            "--db",
            str(db),
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    # until the batch's run is stored and running: the hang holds it there until its deadline
    # (20 s of the check's own time), so the signal lands mid-run on any machine
    while ("running",) not in [(state,) for _batch, state in _runs(db)]:
        assert proc.poll() is None, proc.communicate()[1][-2000:]
        time.sleep(0.02)
    proc.send_signal(signal.SIGINT)
    _out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err[-2000:]
    assert "Traceback" not in err
    ((batch, state),) = _runs(db)
    assert state == "interrupted"
    said = re.search(r"interrupted; resume with `valorch run --resume ([0-9a-f-]+)`", err)
    assert said and said.group(1) == batch, err[-2000:]

    done = cli("run", "--resume", batch, "--no-gate", "--no-matrix", db=db)
    assert done.returncode == 0, done.stderr[-2000:]
    assert _runs(db) == [(batch, "done")]
