"""Ctrl-C on the local interpreter (image ``host``) ends every process valorch started: the
probe, and the workloads it runs in sessions of their own (with a grandchild of theirs),
which a signal to the probe's process group alone left running, reparented to init, for a
`--resume` to start a second copy beside."""

from __future__ import annotations

import os
import signal
import subprocess
import textwrap
import time

from root_helpers import ROOT, VALORCH

MARK = f"31337.{os.getpid()}"  # a sleep no other process on the machine runs


def _marked() -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as fh:
                    if MARK.encode() in fh.read():
                        found.append(int(entry))
            except OSError:
                continue
    return found


def test_ctrl_c_leaves_no_workload_running(tmp_path):
    job = tmp_path / "sleepy.yaml"
    job.write_text(
        textwrap.dedent(f"""
        name: sleepy
        images: [host]
        suites:
          - name: command
            commands:
              - id: sleeps
                argv: [sh, -c, "sleep {MARK} & sleep {MARK}; wait"]
                timeout: 600
        """).lstrip()
    )
    env = {k: v for k, v in os.environ.items() if k != "VALORCH_DB"}
    proc = subprocess.Popen(
        [VALORCH, "run", "--job", str(job), "--no-matrix", "--db", str(tmp_path / "v.sqlite")],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        for _ in range(3000):  # until both sleeps run
            if len(_marked()) >= 2 or proc.poll() is not None:
                break
            time.sleep(0.02)
        assert len(_marked()) >= 2, "the workload never started"
        proc.send_signal(signal.SIGINT)
        _out, err = proc.communicate(timeout=120)
        assert proc.returncode == 130, err[-2000:]
        left = _marked()
        for _ in range(100):  # a SIGKILLed process lingers until its parent reaps it
            if not left:
                break
            time.sleep(0.05)
            left = _marked()
        assert left == [], f"still running after valorch exited: {left}"
    finally:
        for pid in _marked():
            os.kill(pid, signal.SIGKILL)
        if proc.poll() is None:
            proc.kill()
