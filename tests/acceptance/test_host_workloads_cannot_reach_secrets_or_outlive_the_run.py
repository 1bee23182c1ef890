"""A workload on ``--image host`` attacks the valorch that runs it, as a hostile job would:
it reads its ancestors' ``/proc/PID/environ`` and command lines and prints what it finds
reversed and in base64, leaves a daemon behind with ``setsid``, and outlives a valorch
killed outright or hung up on. None of it works (executors/hostguard.py, the probe's
``sandbox.guard_host``): a run whose secrets a workload could read stops before anything
runs (exit 2) unless the workloads run as another user or the user accepts it knowingly;
what a workload prints is scrubbed of every rendering of a secret; nothing a workload
starts survives its run, on SIGHUP, or the death of valorch itself."""

from __future__ import annotations

import base64
import json
import os
import signal
import subprocess
import textwrap
import time
from pathlib import Path

import pytest
from conftest import VALORCH

pytestmark = pytest.mark.cli

TOKEN = "ghp_0123456789abcdefSECRET"
FORMS = (TOKEN, TOKEN[::-1], base64.b64encode(TOKEN.encode()).decode())

# Every ancestor's environment and command line, each line with TOKEN reversed and in
# base64 (to pass a literal mask), then exit 1 so that its output is stored.
STEAL = r"""
p=$$
while [ "$p" -gt 1 ]; do
  for f in environ cmdline; do
    tr '\0' '\n' < /proc/$p/$f 2>/dev/null | grep TOKEN | while read -r l; do
      echo "$l" | rev; echo "$l" | base64 -w0; echo
    done
  done
  p=$(cut -d' ' -f4 /proc/$p/stat)
done
id -u
exit 1
"""


def _job(tmp_path: Path, commands: str, name: str = "attack") -> str:
    job = tmp_path / f"{name}.yaml"
    job.write_text(
        f"name: {name}\nimages: [host]\nsuites:\n  - name: command\n    commands:\n"
        + textwrap.indent(textwrap.dedent(commands).strip() + "\n", " " * 6)
    )
    return str(job)


def _env(db: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("VALORCH_DB", "VALORCH_WORKLOAD_USER")}
    env.update(VALORCH_DB=str(db), **extra)
    return env


def _stored(db: Path) -> bytes:
    return b"".join(p.read_bytes() for p in db.parent.glob(db.name + "*"))


def _steal_job(tmp_path: Path) -> str:
    argv = json.dumps(["sh", "-c", STEAL])
    return _job(tmp_path, f"- id: steal\n  argv: {argv}")


@pytest.mark.skipif(os.geteuid() != 0, reason="the root case: a root workload reads everything")
def test_a_root_run_holding_a_secret_stops_before_anything_runs(tmp_path):
    db = tmp_path / "v.sqlite"
    proc = subprocess.run(
        [VALORCH, "run", "--job", _steal_job(tmp_path), "--no-matrix"],
        capture_output=True,
        text=True,
        env=_env(db, GITHUB_TOKEN=TOKEN),
        timeout=120,
    )
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "GITHUB_TOKEN" in proc.stderr and "VALORCH_WORKLOAD_USER" in proc.stderr
    assert "--host-secrets-visible" in proc.stderr
    assert not any(form in proc.stdout + proc.stderr for form in FORMS)
    assert not db.exists()  # nothing ran, nothing was stored


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can run workloads as another user")
def test_as_another_user_a_workload_finds_no_secret_anywhere(tmp_path):
    db = tmp_path / "v.sqlite"
    tmp_path.chmod(0o755)
    proc = subprocess.run(
        [VALORCH, "run", "--job", _steal_job(tmp_path), "--json", "--no-gate"],
        capture_output=True,
        text=True,
        env=_env(db, GITHUB_TOKEN=TOKEN, VALORCH_WORKLOAD_USER="nobody"),
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (run,) = json.loads(proc.stdout)
    (steal,) = [r for r in run["results"] if r["check"] == "command.steal"]
    assert "65534" in steal["message"], steal  # it ran as nobody
    stored = _stored(db)
    assert not any(form.encode() in stored for form in FORMS)


def test_a_secret_in_an_ancestors_environment_is_in_reach(tmp_path):
    """A shell that exported the token is an ancestor whose environment a workload of the
    same user reads: refused, naming that process; accepted knowingly, the workload's
    renderings of it (reversed, base64) are scrubbed all the same."""
    db = tmp_path / "v.sqlite"
    job = _steal_job(tmp_path)
    shell = f'"{VALORCH}" run --job {job} --json --no-gate "$@"; exit $?'
    env = _env(db, GITHUB_TOKEN=TOKEN)
    refused = subprocess.run(
        ["bash", "-c", shell, "bash"], capture_output=True, text=True, env=env, timeout=120
    )
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert "GITHUB_TOKEN in the environment of process" in refused.stderr, refused.stderr
    accepted = subprocess.run(
        ["bash", "-c", shell, "bash", "--host-secrets-visible"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert accepted.returncode == 0, accepted.stdout + accepted.stderr
    (run,) = json.loads(accepted.stdout)
    (steal,) = [r for r in run["results"] if r["check"] == "command.steal"]
    assert "***" in steal["message"], steal  # it found the token: masked
    assert not any(form.encode() in _stored(db) for form in FORMS)


def test_a_password_on_valorchs_command_line_is_in_reach(tmp_path):
    db = "postgresql://valorch:hunter2-db-password@127.0.0.1:9/valorch"
    proc = subprocess.run(
        [VALORCH, "run", "--image", "host", "--suite", "selftest", "--db", db],
        capture_output=True,
        text=True,
        env=_env(tmp_path / "unused.sqlite"),
        timeout=120,
    )
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "a URL's password in valorch's command line" in proc.stderr, proc.stderr
    assert "VALORCH_DB" in proc.stderr
    assert "hunter2" not in proc.stderr


def _wait_gone(pid: int, seconds: float = 15.0) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        try:  # a zombie is gone for every purpose
            if Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z":
                return True
        except OSError:
            return True
        time.sleep(0.1)
    return False


def _pids(path: Path, n: int, seconds: float = 60.0) -> list[int]:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if path.exists():
            found = [int(x) for x in path.read_text().split()]
            if len(found) >= n:
                return found
        time.sleep(0.1)
    raise AssertionError(f"the workload never wrote {n} pids to {path}")


def test_a_daemon_a_workload_detaches_with_setsid_dies_with_its_check(tmp_path):
    pids = tmp_path / "pids"
    argv = json.dumps(["sh", "-c", f"setsid sh -c 'echo $$ >> {pids}; exec sleep 300' & sleep 1"])
    proc = subprocess.run(
        [VALORCH, "run", "--job", _job(tmp_path, f"- id: detach\n  argv: {argv}"), "--no-matrix"],
        capture_output=True,
        text=True,
        env=_env(tmp_path / "v.sqlite"),
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (daemon,) = _pids(pids, 1)
    assert _wait_gone(daemon), f"the detached daemon {daemon} outlived its run"


def _stored_run(db: Path, seconds: float = 60.0) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        listed = subprocess.run(
            [VALORCH, "results", "list", "--json"], capture_output=True, text=True, env=_env(db)
        )
        if listed.returncode == 0 and json.loads(listed.stdout or "[]"):
            return
        time.sleep(0.2)
    raise AssertionError("the run was never stored")


@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGHUP])
def test_nothing_outlives_a_valorch_killed_outright_or_hung_up_on(tmp_path, how):
    pids = tmp_path / "pids"
    script = (
        f"[ -e {tmp_path}/resumed ] && exit 0; echo $PPID >> {pids}; "
        f"setsid sh -c 'echo $$ >> {pids}; exec sleep 300' & echo $$ >> {pids}; sleep 300"
    )
    db = tmp_path / "v.sqlite"
    valorch = subprocess.Popen(
        [
            VALORCH,
            "run",
            "--job",
            _job(tmp_path, f"- id: hang\n  argv: {json.dumps(['sh', '-c', script])}"),
            "--no-matrix",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=_env(db),
        start_new_session=True,
    )
    try:
        found = _pids(pids, 3)  # the probe's worker, the daemon, the workload
        _stored_run(db)  # its rows are written (a batch's first wave starts before them)
        valorch.send_signal(how)
        _, err = valorch.communicate(timeout=60)
        for pid in found:
            assert _wait_gone(pid), f"process {pid} outlived valorch ({how.name})"
        if how == signal.SIGHUP:  # a hang-up is an interruption: the run can be resumed
            assert valorch.returncode == 128 + signal.SIGHUP, err
            assert b"resume with `valorch run --resume" in err, err
        else:  # killed outright, it marked nothing: the run is shown abandoned, resumable
            listed = subprocess.run(
                [VALORCH, "results", "list", "--json"], capture_output=True, text=True, env=_env(db)
            )
            (row,) = json.loads(listed.stdout)
            assert row["state"] == "abandoned", row
            shown = subprocess.run(
                [VALORCH, "results", "show", row["run"]],
                capture_output=True,
                text=True,
                env=_env(db),
            )
            assert "abandoned" in shown.stdout and "valorch run --resume" in shown.stdout, shown
            (tmp_path / "resumed").touch()  # the workload ends at once this time
            resumed = subprocess.run(
                [VALORCH, "run", "--resume", row["run"], "--no-matrix", "--no-gate"],
                capture_output=True,
                text=True,
                env=_env(db),
                timeout=120,
            )
            assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    finally:
        if valorch.poll() is None:
            valorch.kill()
            valorch.communicate()


# The workload writes a forged `pass` for itself to its probe's stdout (the probe is the
# worker's parent; root opens its /proc/PID/fd/1, another user cannot), then kills the
# probe and the worker, so that the real result never comes.
FORGE = r"""
line='@@VALORCH@@ {"type":"result","check":"command.forge","status":"pass","attempt":1,"feature":"command","kind":"command","message":"forged"}'
probe=$(cut -d' ' -f4 /proc/$PPID/stat)
echo "$line" > /proc/$probe/fd/1
sleep 0.5
kill -9 $(cut -d' ' -f4 /proc/$PPID/stat) $PPID
sleep 5
"""


def test_a_workload_that_forges_a_pass_and_kills_its_probe_gets_no_pass(tmp_path):
    job = _job(tmp_path, f"- id: forge\n  argv: {json.dumps(['sh', '-c', FORGE])}")
    out = tmp_path / "out.json"  # a file, not a pipe: as root the workload reaches any pipe
    with out.open("w") as fh:
        proc = subprocess.run(
            [VALORCH, "run", "--job", job, "--json"],
            stdout=fh,
            stderr=subprocess.PIPE,
            text=True,
            env=_env(tmp_path / "v.sqlite"),
            timeout=120,
        )
    assert proc.returncode != 0, out.read_text() + proc.stderr
    (run,) = json.loads(out.read_text())
    (forge,) = [r for r in run["results"] if r["check"] == "command.forge"]
    assert forge["status"] != "pass", forge
    assert forge["status"] in ("error", "crash"), forge
