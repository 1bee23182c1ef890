"""Probe containers are locked down, read back from the engine with
`docker inspect` and from inside: every capability dropped but SETUID, SETGID and
CHOWN, memory and CPU limits, a read-only root file system with a tmpfs /tmp; a
check past its memory limit is a `crash` "killed: out of memory", the host lives on."""

import json

import docker
from run_support import rows as db_rows

from orchestrator.executors.container import PROBE_CAPS
from orchestrator.executors.docker import DockerExecutor, container_options, engine_totals
from orchestrator.executors.limits import limits_for
from orchestrator.hosts.detect import detect_local
from orchestrator.spec import CommandSpec, ImageSpec, SuiteRef, Task

IMAGE = "cpu_debian12_py3.11"  # valorch/base:bookworm
# the container's own limits, from cgroup v2 or v1
CGROUP_LIMITS = (
    "if [ -f /sys/fs/cgroup/memory.max ]; then echo memory $(cat /sys/fs/cgroup/memory.max) "
    "cpu $(cat /sys/fs/cgroup/cpu.max); "
    "else echo memory $(cat /sys/fs/cgroup/memory/memory.limit_in_bytes) "
    "cpu $(cat /sys/fs/cgroup/cpu/cpu.cfs_quota_us) $(cat /sys/fs/cgroup/cpu/cpu.cfs_period_us); fi"
)


def _statuses(db):
    return {
        c: (s, m)
        for c, s, m in db_rows(
            db,
            "SELECT c.check_id, r.status, r.message FROM result r "
            'JOIN "check" c ON c.id = r.check_pk ORDER BY r.id',
        )
    }


def _job(tmp_path, commands, **suite):
    spec = {
        "name": "lockdown",
        "images": [IMAGE],
        "suites": [
            {
                "name": "command",
                **suite,
                "commands": [
                    {"id": c[0], "argv": c[1], "timeout": 60, **(c[2] if len(c) > 2 else {})}
                    for c in commands
                ],
            }
        ],
    }
    path = tmp_path / "job.json"
    path.write_text(json.dumps(spec))
    return path


def _inspect(task):
    client = DockerExecutor(task.host).client
    limits = limits_for(task, *engine_totals(client, task.host.endpoint))
    opts = container_options(task, "lockdown-test", limits)
    opts["command"] = [
        "sh",
        "-c",
        "grep CapEff /proc/self/status; touch /etc/x 2>/dev/null || echo ro; "
        "touch /tmp/x && echo tmp; id -u",
    ]
    c = client.containers.create("valorch/base:bookworm", **opts)
    try:
        c.start()
        c.wait(timeout=60)
        out = c.logs(stdout=True, stderr=False).decode().split()
        info = client.api.inspect_container(c.id)
    finally:
        c.remove(force=True, v=True)
    return limits, info["HostConfig"], info["Config"], out


def test_engine_reports_the_lockdown():
    image = ImageSpec(alias="b", reference="valorch/base:bookworm", backend="cpu")
    # a suite with no declared workload: nobody, with no capability at all
    task = Task(image=image, suite=SuiteRef(name="smoke"), host=detect_local(), checks=())
    limits, host, config, out = _inspect(task)
    assert host["CapDrop"] == ["ALL"] and not host["CapAdd"] and config["User"] == "65534:65534"
    assert host["Memory"] == limits.memory > 0 and host["MemorySwap"] == limits.memory
    assert host["NanoCpus"] == int(limits.cpus * 1e9) > 0
    assert host["ReadonlyRootfs"] is True and set(host["Tmpfs"]) == {"/tmp", "/var/tmp"}
    assert (
        host["Privileged"] is False and host["NetworkMode"] == "none" and host["PidsLimit"] == 4096
    )
    assert out == ["CapEff:", "0000000000000000", "ro", "tmp", "65534"]
    # declared workloads: uid 0 keeps only what starting them as 65534 needs
    work = Task(
        image=image,
        suite=SuiteRef(name="command", commands=(CommandSpec(id="a", argv=("true",)),)),
        host=detect_local(),
        checks=(),
    )
    _, host, config, out = _inspect(work)
    assert (
        sorted(host["CapAdd"]) == sorted(PROBE_CAPS) == ["CHOWN", "SETGID", "SETUID"]
        and not config["User"]
    )
    # CAP_CHOWN (0), CAP_SETGID (6), CAP_SETUID (7): 0xc1
    assert out == ["CapEff:", "00000000000000c1", "ro", "tmp", "0"]


def test_suite_limits_reach_the_container_and_oom_is_a_crash(cli, tmp_path, leftover_containers):
    """128 MiB for the suite: a command allocating 1 GiB is killed by the kernel inside
    the container; its check is `crash` "killed: out of memory", the next check runs."""
    job = _job(
        tmp_path,
        [
            ("small", ["python3", "-c", "b = b'x' * (16 << 20)"]),
            ("hog", ["python3", "-c", "b = b'x' * (1 << 30)"]),
            (
                "limits",
                ["sh", "-c", CGROUP_LIMITS],
                {"stdout": ["^memory 134217728 cpu 50000 100000$"]},
            ),
            ("after", ["true"]),
        ],
        memory="128m",
        cpus=0.5,
    )
    proc = cli("run", "--job", str(job), "--json", "--no-matrix")
    assert proc.returncode == 1, proc.stderr[-3000:]  # gate: a crash
    rows = _statuses(cli.db)
    assert {c: s for c, (s, _) in rows.items()} == {
        "command.small": "pass",
        "command.hog": "crash",
        "command.limits": "pass",
        "command.after": "pass",
    }
    assert (
        "killed: out of memory (the container's memory limit of 128 MiB)" in rows["command.hog"][1]
    )
    assert leftover_containers() == 0


def test_default_limits_are_a_share_of_the_engine():
    client = docker.from_env()
    mem, ncpu = engine_totals(client, "unix:///var/run/docker.sock")
    host = detect_local()
    task = Task(
        image=ImageSpec(alias="b", reference="valorch/base:bookworm", backend="cpu"),
        suite=SuiteRef(name="smoke"),
        host=host,
        checks=(),
    )
    limits = limits_for(task, mem, ncpu)
    assert 0 < limits.memory <= mem and 0 < limits.cpus <= ncpu
