"""A valorch killed outright (SIGKILL) cleans nothing up. Containers whose owner label
names a process of this boot and PID namespace that no longer runs are removed by the
next run; a live owner's, another machine's and unlabelled ones are left alone
(executors/owner.py). Real engine, real containers, a real `valorch run`."""

import subprocess
import sys
import uuid

from orchestrator.executors import owner

IMAGE = "valorch/base:bookworm"


def _container(owner_label: str | None) -> str:
    labels = [
        "--label",
        "org.valorch=1",
        "--label",
        f"org.valorch.run={uuid.uuid4()}",
        "--label",
        "org.valorch.image=orphan-test",
    ]
    if owner_label:
        labels += ["--label", f"org.valorch.owner={owner_label}"]
    return subprocess.run(
        ["docker", "create", "--network", "none", *labels, IMAGE, "true"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()


def _exists(cid: str) -> bool:
    return (
        subprocess.run(["docker", "container", "inspect", cid], capture_output=True).returncode == 0
    )


def test_a_killed_valorchs_containers_go_with_the_next_run_and_nothing_else_does(cli):
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    boot, ns, _pid, _start = owner.me().split("/")
    killed = _container(
        f"{boot}/{ns}/{gone.pid}/{owner.start_time(1)}"
    )  # its valorch no longer runs
    live = _container(owner.me())  # this test process: alive
    other_boot = _container(
        f"{uuid.uuid4()}/{ns}/{gone.pid}/1"
    )  # another machine on a shared engine
    other_ns = _container(f"{boot}/1/{gone.pid}/1")  # a valorch in a container of its own
    unlabelled = _container(None)
    try:
        r = cli("run", "--image", "cpu_debian12_py3.11", "--check", "env.*", "--no-matrix")
        assert r.returncode == 0, r.stderr[-2000:]
        assert not _exists(killed)
        assert all(_exists(c) for c in (live, other_boot, other_ns, unlabelled))
    finally:
        subprocess.run(
            ["docker", "rm", "-f", killed, live, other_boot, other_ns, unlabelled],
            capture_output=True,
        )


def test_containers_carry_their_owner():
    from orchestrator.executors.container import labels_for

    assert labels_for("r", "smoke", "img")["org.valorch.owner"] == owner.me()
    assert (
        not owner.orphaned(owner.me()) and not owner.orphaned(None) and not owner.orphaned("a/b/c")
    )
