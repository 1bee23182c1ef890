"""A container's memory and CPU limits are bounded where they are parsed: 0 (which Docker
reads as "no limit"), 1e-12 CPUs (0 nano-CPUs: no quota) and values no host has are exit 2
naming the file; the smallest and largest accepted values are what the kernel enforces,
read back from the container's own cgroup files."""

from __future__ import annotations

import json
import subprocess
import textwrap

import pytest

IMAGE = "cpu_debian12_py3.11_pytorch_2.13"

READ_MEMORY = (
    "cat /sys/fs/cgroup/memory.max 2>/dev/null || cat /sys/fs/cgroup/memory/memory.limit_in_bytes"
)
READ_CPU = (
    "cat /sys/fs/cgroup/cpu.max 2>/dev/null || "
    'echo "$(cat /sys/fs/cgroup/cpu/cpu.cfs_quota_us) $(cat /sys/fs/cgroup/cpu/cpu.cfs_period_us)"'
)


def _job(tmp_path, memory: str, cpus: str, mem: str = ".", cpu: str = "."):
    job = tmp_path / "limits.yaml"
    job.write_text(
        textwrap.dedent(f"""
        name: limits
        images: [{IMAGE}]
        suites:
          - name: command
            memory: '{memory}'
            cpus: {cpus}
            timeout: 600
            commands:
              - id: memory
                argv: [sh, -c, {json.dumps(READ_MEMORY)}]
                stdout: ['^{mem}$']
                timeout: 300
              - id: cpu
                argv: [sh, -c, {json.dumps(READ_CPU)}]
                stdout: ['^{cpu}$']
                timeout: 300
        """).lstrip()
    )
    return job


@pytest.mark.parametrize(
    ("memory", "cpus", "word"),
    [
        ("0", "2", "memory"),
        ("63m", "2", "memory"),
        ("65t", "2", "memory"),
        ("512m", "1e-12", "cpus"),
        ("512m", "0", "cpus"),
        ("512m", "4097", "cpus"),
        ("512m", ".nan", "cpus"),
    ],
)
def test_a_limit_outside_its_bounds_is_refused_at_load(cli, tmp_path, memory, cpus, word):
    job = _job(tmp_path, memory, cpus)
    proc = cli("jobs", "show", str(job))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert f"{job}:" in proc.stderr and word in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize("memory", ["0", "1k", "65t", "9" * 400])
def test_a_hosts_file_limit_outside_its_bounds_is_refused(cli, tmp_path, memory):
    hosts = tmp_path / "hosts.yaml"
    hosts.write_text(f"- name: here\n  container_memory: '{memory}'\n  container_cpus: 1\n")
    proc = cli("hosts", "list", "--hosts", str(hosts))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert f"{hosts}:2" in proc.stderr and "container_memory" in proc.stderr, proc.stderr


def _engine(field: str) -> int:
    done = subprocess.run(
        ["docker", "info", "--format", "{{." + field + "}}"], capture_output=True, text=True
    )
    return int(done.stdout.strip())


def _passes(cli, job) -> None:
    """Both checks pass: what the container's cgroup files say is what their regexes expect."""
    proc = cli("run", "--job", str(job), "--json", "--no-gate", timeout=900)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (run,) = json.loads(proc.stdout)
    res = {r["check"]: r for r in run["results"]}
    for check in ("command.memory", "command.cpu"):
        assert res[check]["status"] == "pass", res[check]


@pytest.mark.docker
def test_the_smallest_accepted_limits_are_enforced_in_the_container(cli, tmp_path):
    # 0.01 CPU is 1 ms of every 100 ms (not "max" / -1, no quota)
    _passes(cli, _job(tmp_path, "64m", "0.01", mem=str(64 << 20), cpu="1000 100000"))


@pytest.mark.docker
def test_the_largest_accepted_limits_are_the_hosts_own(cli, tmp_path):
    page = 4096  # the kernel keeps a memory limit in whole pages
    mem = _engine("MemTotal") // page * page
    cpu = f"{_engine('NCPU') * 100000} 100000"
    _passes(cli, _job(tmp_path, "64t", "4096", mem=str(mem), cpu=cpu))
