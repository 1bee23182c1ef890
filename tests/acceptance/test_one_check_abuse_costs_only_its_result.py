"""One check's abuse costs only its own result (real engine, the local test images): a
command that fills /tmp under `memory: 512m` meets a full tmpfs, not the OOM killer of the
whole probe; when the probe dies under a check, the checks after it are `error` ("not
run: the probe was killed by …, after check X"), never `crash`, and run again once in a
fresh container."""

from __future__ import annotations

import json
import subprocess
import textwrap
import time

import pytest
from conftest import ROOT, VALORCH

pytestmark = pytest.mark.docker
IMAGE = "cpu_debian12_py3.11_pytorch_2.13"


def _job(tmp_path, commands: str):
    job = tmp_path / "job.yaml"
    job.write_text(
        textwrap.dedent(f"""
        name: abuse
        images: [{IMAGE}]
        suites:
          - name: command
            memory: 512m
            commands:
        """).lstrip()
        + textwrap.indent(textwrap.dedent(commands).strip() + "\n", " " * 6)
    )
    return job


def test_filling_tmp_fails_that_check_and_spares_the_next(cli, tmp_path):
    job = _job(
        tmp_path,
        """
        - id: fill-tmp
          argv: [sh, -c, "head -c 800000000 /dev/zero > /tmp/fill"]
          timeout: 120
        - id: innocent
          argv: [python3, -c, "print('fine')"]
          stdout: ['^fine$']
        """,
    )
    proc = cli("run", "--job", str(job), "--json", "--no-gate")
    assert proc.returncode == 0, proc.stderr
    (run,) = json.loads(proc.stdout)
    res = {r["check"]: r for r in run["results"]}
    assert res["command.fill-tmp"]["status"] == "fail", res["command.fill-tmp"]  # its own failure
    assert "No space left on device" in res["command.fill-tmp"]["message"], res["command.fill-tmp"]
    assert res["command.innocent"]["status"] == "pass", res["command.innocent"]


def _containers_of(pid: int) -> list[str]:
    out = subprocess.run(
        [
            "docker",
            "ps",
            "--filter",
            "label=org.valorch.owner",
            "--format",
            '{{.ID}} {{.Label "org.valorch.owner"}}',
        ],
        capture_output=True,
        text=True,
    ).stdout
    return [
        line.split()[0]
        for line in out.splitlines()
        if len(line.split()) == 2
        and line.split()[1].count("/") == 3
        and line.split()[1].split("/")[2] == str(pid)
    ]


def test_a_killed_probe_leaves_the_rest_not_run_and_runs_them_again(tmp_path):
    job = _job(
        tmp_path,
        """
        - id: first
          argv: [python3, -c, "print('first')"]
        - id: victim
          argv: [sleep, "300"]
          timeout: 400
        - id: after-one
          argv: [python3, -c, "print('ok')"]
          stdout: ['^ok$']
        - id: after-two
          argv: [python3, -c, "print('ok')"]
          stdout: ['^ok$']
        """,
    )
    proc = subprocess.Popen(
        [
            VALORCH,
            "run",
            "--job",
            str(job),
            "--json",
            "--no-gate",
            "--db",
            str(tmp_path / "v.sqlite"),
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    killed = None
    for _ in range(
        600
    ):  # wait until the sleeping check runs, then kill its container's probe (pid 1)
        for cid in _containers_of(proc.pid):
            top = subprocess.run(["docker", "top", cid], capture_output=True, text=True).stdout
            if "sleep 300" in top:
                subprocess.run(["docker", "kill", "--signal", "KILL", cid], capture_output=True)
                killed = cid
        if killed or proc.poll() is not None:
            break
        time.sleep(0.5)
    out, err = proc.communicate(timeout=600)
    assert killed, err
    assert proc.returncode == 0, err
    (run,) = json.loads(out)
    res = {r["check"]: r for r in run["results"]}
    assert res["command.first"]["status"] == "pass"
    assert res["command.victim"]["status"] == "crash"
    assert "killed by SIGKILL" in res["command.victim"]["message"]
    for cid in ("command.after-one", "command.after-two"):  # ran again in a fresh container
        assert res[cid]["status"] == "pass", res[cid]
    assert all(r["status"] != "crash" for c, r in res.items() if c != "command.victim")
