"""How the probe starts untrusted workloads (probe/sandbox.py), for real: the
probe as a subprocess, its command checks, the kernel's /proc permissions.

Dropping to uid 65534 needs root; the tests that need it skip without it (CI
runs them as root). The probe runs on /usr/bin/python3 there, which every
user can execute (a pyenv interpreter under /root is not)."""

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from valorch_probe import MARKER
from valorch_probe.sandbox import MAX_CAPTURE, TAIL_BYTES, run_workload

ROOT = Path(__file__).resolve().parents[2]
SYSTEM_PYTHON = "/usr/bin/python3"
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="dropping to uid 65534 needs root")


def as_ids(uid=None, gid=None, groups=()):
    """Popen arguments that start a child with these ids: ``user``/``group``/``extra_groups``
    where Popen takes them (3.9+), a preexec_fn on 3.8 (these tests also run there)."""
    if sys.version_info >= (3, 9):
        ids = {"extra_groups": list(groups)}
        ids.update({} if uid is None else {"user": uid, "group": gid})
        return ids

    def drop():
        os.setgroups(list(groups))
        if uid is not None:
            os.setgid(gid)
            os.setuid(uid)

    return {"preexec_fn": drop}


@pytest.fixture
def shared_probe():
    """The probe in a directory every user can read (pytest's tmp_path is private to root)."""
    top = tempfile.mkdtemp(prefix="valorch-sandbox-test-")
    os.chmod(top, 0o755)
    shutil.copytree(
        ROOT / "valorch_probe",
        Path(top) / "valorch_probe",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    yield top
    shutil.rmtree(top, ignore_errors=True)


def probe(cwd, commands, python=SYSTEM_PYTHON, suite="command", declare=None, path=None, **popen):
    if not os.access(python, os.X_OK):
        pytest.skip(f"{python} is not here")
    declare = declare or {
        "commands": [
            {"id": i, "argv": ["sh", "-c", script], "timeout": 60} for i, script in commands
        ]
    }
    proc = subprocess.run(
        [python, "-m", "valorch_probe", "run", "--suite", suite, "--declare", json.dumps(declare)],
        cwd=cwd,
        capture_output=True,
        timeout=120,
        env={"PYTHONPATH": path or str(cwd), "PATH": "/usr/bin:/bin"},
        **popen,
    )
    records = [
        json.loads(line[len(MARKER) :])
        for line in proc.stdout.decode().splitlines()
        if line.startswith(MARKER)
    ]
    results = {r["check"]: r for r in records if r["type"] == "result"}
    meta = next(r for r in records if r["type"] == "meta")
    return results, meta


@needs_root
def test_root_probe_runs_workloads_as_nobody_without_groups_or_fds(shared_probe):
    results, meta = probe(
        shared_probe,
        [
            ("ids", 'test "$(id -u):$(id -G)" = "65534:65534"'),
            # only stdin, stdout, stderr are open: nothing of the probe's is inherited
            (
                "fds",
                'test "$(ls /proc/self/fd | sort -n | tr "\\n" " ")" = "0 1 2 3 "',
            ),  # 3: ls's own dir
            ("home", 'test -O "$HOME" && test -w "$TMPDIR" && touch "$HOME/x"'),
            ("worker-fds", "ls /proc/$PPID/fd"),  # another uid: not even listed
            ("probe-stdout", "echo forged > /proc/$(cut -d' ' -f4 /proc/$PPID/stat)/fd/1"),
        ],
    )
    assert meta["hardening"] == {"probe": "non-dumpable", "workloads": "uid 65534"}
    assert {c: r["status"] for c, r in results.items()} == {
        "command.ids": "pass",
        "command.fds": "pass",
        "command.home": "pass",
        "command.worker-fds": "fail",
        "command.probe-stdout": "fail",
    }, results
    assert "Permission denied" in results["command.probe-stdout"]["message"]
    assert results["command.ids"]["metrics"]["user"] == "uid 65534"


@needs_root
def test_same_uid_cannot_open_the_non_dumpable_probe(shared_probe):
    """A probe that cannot drop (here: run as nobody already) runs workloads as its own
    uid; PR_SET_DUMPABLE 0 still closes its /proc/PID/fd to them."""
    results, meta = probe(
        shared_probe,
        [
            ("worker-fds", "ls /proc/$PPID/fd"),
            ("worker-pipe", "for f in /proc/$PPID/fd/*; do echo 'RESULT {}' > $f || exit 1; done"),
            ("probe-stdout", "echo forged > /proc/$(cut -d' ' -f4 /proc/$PPID/stat)/fd/1"),
            (
                "own-fds",
                "ls /proc/self/fd > /dev/null",
            ),  # a workload itself is dumpable: its own are there
        ],
        **as_ids(65534, 65534),
    )
    assert meta["hardening"]["probe"] == "non-dumpable"
    assert meta["hardening"]["workloads"] == "uid 65534 (the probe's own: not root)"
    assert {c: r["status"] for c, r in results.items()} == {
        "command.worker-fds": "fail",
        "command.worker-pipe": "fail",
        "command.probe-stdout": "fail",
        "command.own-fds": "pass",
    }, results
    assert all(r["metrics"]["user"].startswith("uid 65534 (") for r in results.values())


@needs_root
def test_python38_drops_with_preexec_fn(shared_probe):
    """Python 3.8 has no Popen(user=...): the probe drops ids in preexec_fn there."""
    candidates = [
        shutil.which("python3.8"),
        *map(str, Path.home().glob(".pyenv/versions/3.8*/bin/python3.8")),
    ]
    works = [
        p
        for p in candidates
        if p
        and subprocess.run(
            [p, "-c", "import sys; assert sys.version_info[:2] == (3, 8)"], capture_output=True
        ).returncode
        == 0
    ]
    if not works:
        pytest.skip("no Python 3.8 here")
    results, _ = probe(
        shared_probe, [("ids", 'test "$(id -u):$(id -G)" = "65534:65534"')], python=works[0]
    )
    assert results["command.ids"]["status"] == "pass", results


def test_a_flood_on_its_own_stdout_is_read_through_and_capped():
    run = run_workload(["sh", "-c", "head -c 50000000 /dev/zero; echo END"], timeout=60)
    assert run["returncode"] == 0 and not run["timed_out"]
    assert run["stdout"]["bytes"] == 50_000_001 + 3
    assert len(run["stdout"]["text"]) <= MAX_CAPTURE + TAIL_BYTES + 100 and run["stdout"][
        "text"
    ].endswith("END\n")


def test_a_workload_that_closes_its_pipes_still_times_out():
    run = run_workload(["sh", "-c", "exec >&- 2>&-; sleep 30"], timeout=1)
    assert run["timed_out"] and run["returncode"] is None


@needs_root
def test_workloads_keep_only_the_groups_that_own_gpu_device_nodes(tmp_path):
    """ROCm containers get video/render through group_add: a workload keeps those,
    and nothing else of the probe's groups (never root's)."""
    (tmp_path / "dri").mkdir()
    kfd, render = tmp_path / "kfd", tmp_path / "dri" / "renderD128"
    kfd.touch()
    render.touch()
    os.chown(kfd, 0, 44)
    os.chown(render, 0, 109)
    code = (
        "import sys; sys.path.insert(0, %r); from valorch_probe.sandbox import device_groups; "
        "print(device_groups([%r, %r]))" % (str(ROOT), str(kfd), str(tmp_path / "dri"))
    )
    groups = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        **as_ids(groups=[0, 44, 109, 6]),
    ).stdout.strip()
    assert groups == "[44, 109]"  # 0 (root) and 6 (owns no device node) are dropped


@needs_root
def test_pytest_workload_runs_as_nobody(shared_probe):
    """pytest (copied from this environment: pure Python) runs the workload as uid
    65534, writes its JUnit XML into a directory that user owns, and the probe reads it."""
    site = Path(shared_probe) / "site"
    for name in ("pytest", "_pytest", "pluggy", "iniconfig", "packaging", "pygments", "py"):
        src = Path(__import__(name).__file__)
        if src.name == "__init__.py":
            shutil.copytree(src.parent, site / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:  # a module (pytest's py.py shim)
            site.mkdir(exist_ok=True)
            shutil.copy(src, site / src.name)
    (Path(shared_probe) / "wl").mkdir()
    (Path(shared_probe) / "wl" / "test_who.py").write_text(
        "import os\n\n"
        "def test_uid():\n    assert (os.getuid(), os.getgid(), os.getgroups()) == (65534, 65534, [])\n"
        "    open(os.path.join(os.environ['HOME'], 'x'), 'w').close()\n\n"
        "def test_fails():\n    assert False\n"
    )
    declare = {"pytest": {"path": f"{shared_probe}/wl", "timeout": 120}}
    results, _meta = probe(
        shared_probe, [], suite="pytest", declare=declare, path=f"{shared_probe}:{site}"
    )
    assert {c: r["status"] for c, r in results.items()} == {
        "pytest.run": "pass",
        "pytest.wl.test_who.test_uid": "pass",
        "pytest.wl.test_who.test_fails": "fail",
    }, [r["message"] + r.get("log", "") for r in results.values()]
    assert results["pytest.run"]["metrics"]["user"] == "uid 65534"
