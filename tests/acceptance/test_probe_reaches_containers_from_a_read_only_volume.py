"""``valorch run`` on a container image mounts the probe read-only from a volume the engine
keeps for this probe version (published by the first run, only looked up after), instead
of copying it into every container: a check sees the mount read-only and cannot write
into the probe, and a second run adds no volume."""

from __future__ import annotations

import json
import textwrap

import docker
import pytest

from orchestrator.executors import probe_volume
from orchestrator.executors.base import probe_package

pytestmark = pytest.mark.docker

PROBE = "/opt/valorch/valorch_probe"


def _job(tmp_path) -> str:
    job = tmp_path / "probe-volume.yaml"
    job.write_text(
        textwrap.dedent(f"""
        name: probe-volume
        images: [cpu_debian12_py3.11]
        suites:
          - name: command
            commands:
              - id: mounted-read-only
                argv: [sh, -c, "grep ' {PROBE} ' /proc/self/mounts"]
                stdout: ['{PROBE} \\S+ ro[, ]']
              - id: probe-unwritable
                argv: [sh, -c, "echo x >> {PROBE}/__init__.py"]
        """).lstrip()
    )
    return str(job)


def _probe_volumes() -> set[str]:
    _, digest = probe_package()
    listed = docker.from_env().volumes.list(
        filters={"label": f"{probe_volume.VERSION_LABEL}={digest}"}
    )
    return {v.name for v in listed}


def test_the_probe_is_mounted_read_only_and_published_once(cli, tmp_path):
    job = _job(tmp_path)
    first = cli("run", "--job", job, "--json", "--no-gate")
    assert first.returncode == 0, first.stderr
    (run,) = json.loads(first.stdout)
    res = {r["check"]: r for r in run["results"]}
    assert run["executor"] == "docker"
    assert res["command.mounted-read-only"]["status"] == "pass", res["command.mounted-read-only"]
    assert res["command.probe-unwritable"]["status"] == "fail", res["command.probe-unwritable"]
    published = _probe_volumes()
    assert len(published) == 2  # the data and the volume that vouches for it
    second = cli("run", "--job", job, "--json", "--no-gate")
    assert second.returncode == 0, second.stderr
    (again,) = json.loads(second.stdout)
    assert {r["check"]: r["status"] for r in again["results"]} == {
        "command.mounted-read-only": "pass",
        "command.probe-unwritable": "fail",
    }
    assert _probe_volumes() == published
