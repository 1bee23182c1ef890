"""``run``, ``qualify`` and ``bisect`` run checks through one pipeline, and the options that
choose where and how the checks run are the same for all three (commands/placing.py): each
command lists them, and each takes effect in ``qualify`` and ``bisect`` as it does in
``run`` (``qualify --retries`` moves a failed task to another host, ``qualify --repeat``
runs the candidate that many times, ``bisect --executor host`` runs on the local
interpreter, ``bisect --pull never`` pulls nothing)."""

import json
import re
import sqlite3

import pytest

from orchestrator.commands.placing import OPTIONS

FLAGS = sorted(o.default.param_decls[0] for o in OPTIONS)
GONE = (
    "family: local-test\nbackend: cpu\nlocal: true\nimages:\n"
    "  - alias: gone\n    reference: valorch/test:not-built-here\n"
)
TWO_HOSTS = (
    "hosts:\n"
    "  - name: one\n    endpoint: unix:///var/run/docker.sock\n"
    "  - name: two\n    endpoint: unix:///var/run/docker.sock\n"
)


@pytest.mark.parametrize("command", ["run", "qualify", "bisect"])
def test_every_command_that_runs_checks_lists_the_same_placement_options(cli, command):
    proc = cli(command, "--help", env={"COLUMNS": "200"})
    assert proc.returncode == 0, proc.stderr
    listed = set(re.findall(r"--[a-z][a-z-]+", proc.stdout))
    assert set(FLAGS) <= listed, sorted(set(FLAGS) - listed)


@pytest.fixture
def baseline(cli):
    """A stored run of the host interpreter, named b1."""
    base = cli("run", "--image", "host", "--json", "--no-matrix")
    assert base.returncode == 0, base.stderr[-2000:]
    assert cli("baseline", "set", "b1", json.loads(base.stdout)[0]["run"]).returncode == 0
    return "b1"


def _tasks(db):
    with sqlite3.connect(db) as conn:
        return conn.execute(
            "SELECT h.name, t.tries FROM task t JOIN run r ON r.id = t.run_id "
            "JOIN host h ON h.id = r.host_id JOIN image i ON i.id = r.image_id "
            "WHERE i.alias = 'gone'"
        ).fetchall()


@pytest.mark.docker
def test_qualify_retries_moves_a_failed_task_to_another_host(cli, tmp_path, baseline):
    (tmp_path / "cat").mkdir()
    (tmp_path / "cat" / "x.yaml").write_text(GONE)
    (tmp_path / "hosts.yaml").write_text(TWO_HOSTS)
    args = ("qualify", "--image", "gone", "--catalog", str(tmp_path / "cat"))
    args += ("--hosts", str(tmp_path / "hosts.yaml"), "--baseline", baseline)
    once = cli(*args, "--retries", "0", "--out-dir", str(tmp_path / "r0"))
    assert once.returncode == 1 and "Traceback" not in once.stderr, once.stderr[-2000:]
    assert _tasks(cli.db) == [("one", 1)]  # the image is absent: an infrastructure error
    moved = cli(*args, "--retries", "1", "--out-dir", str(tmp_path / "r1"))
    assert moved.returncode == 1, moved.stderr[-2000:]
    assert sorted(_tasks(cli.db)) == [("one", 1), ("two", 2)]  # tried on one, then on two


def test_qualify_repeat_runs_the_candidate_that_many_times(cli, tmp_path, baseline):
    proc = cli(
        "qualify",
        "--image",
        "host",
        "--executor",
        "host",
        "--repeat",
        "2",
        "--baseline",
        baseline,
        "--out-dir",
        str(tmp_path / "out"),
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    runs = json.loads(cli("results", "list", "--json").stdout)
    assert sorted(r["job"] for r in runs) == ["adhoc", "candidate", "candidate"]


def test_bisect_executor_host_runs_on_the_local_interpreter_only(cli):
    proc = cli(
        "bisect",
        "--check",
        "env.facts",
        "--executor",
        "host",
        "--images",
        "host",
        "cpu_debian12_py3.11_pytorch_2.13",
    )
    assert proc.returncode == 2, proc.stderr
    assert "--executor host runs only the image 'host'" in proc.stderr
    assert "Traceback" not in proc.stderr


@pytest.mark.docker
def test_bisect_pull_never_pulls_nothing(cli, tmp_path):
    (tmp_path / "x.yaml").write_text(
        "family: remote-test\nbackend: cpu\nimages:\n"
        "  - alias: old\n    reference: valorch/absent:old\n"
        "  - alias: new\n    reference: valorch/absent:new\n"
    )
    proc = cli(
        "bisect",
        "--check",
        "env.facts",
        "--pull",
        "never",
        "--catalog",
        str(tmp_path),
        "--images",
        "old",
        "new",
    )
    assert proc.returncode == 3, proc.stderr
    assert "--pull never" in proc.stderr and "Traceback" not in proc.stderr
