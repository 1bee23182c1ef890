"""``hosts probe`` says more than ``hosts list``: CPU model and count, memory, kernel, GPU
driver, ROCm / CUDA release and the container runtime, each with its evidence, read on the
host (through a detection container on its engine): compared here with this machine's own
/proc, uname and docker info. A fact without evidence (no GPU driver here) is absent."""

import json
import os
import re
import subprocess
from pathlib import Path

import pytest
from root_helpers import run_cli

pytestmark = pytest.mark.docker


def test_probe_reports_this_hosts_facts():
    proc = run_cli("hosts", "probe", "--json")
    assert proc.returncode == 0, proc.stderr
    (host,) = json.loads(proc.stdout)
    facts = {f["fact"]: f for f in host["facts"]}
    cpuinfo = Path("/proc/cpuinfo").read_text()
    assert facts["cpus"]["value"] == str(len(re.findall(r"^processor\s*:", cpuinfo, re.M)))
    model = re.search(r"^model name\s*:\s*(.+)$", cpuinfo, re.M)
    if model:
        assert facts["cpu model"]["value"] == " ".join(model.group(1).split())
        assert facts["cpu model"]["evidence"].startswith("/proc/cpuinfo")
    kib = int(re.search(r"^MemTotal:\s*(\d+)", Path("/proc/meminfo").read_text(), re.M).group(1))
    assert facts["memory"]["value"] == f"{kib / 2**20:.1f} GiB"
    assert facts["kernel"]["value"] == os.uname().release
    engine = subprocess.run(
        ["docker", "version", "--format", "{{.Server.Version}}"], capture_output=True, text=True
    ).stdout.strip()
    assert facts["container runtime"]["value"].startswith(f"docker {engine}")
    assert "docker info" in facts["container runtime"]["evidence"]
    for module in ("amdgpu", "nvidia"):
        if not Path(f"/sys/module/{module}").exists():
            assert not any(
                f["value"].startswith(module) for f in host["facts"] if f["fact"] == "gpu driver"
            )
    if not list(Path("/opt").glob("rocm*/.info/version")):
        assert "rocm" not in facts
    if not any(Path(f"/sys/module/{m}").exists() for m in ("amdgpu", "nvidia")):
        # what the probe looked for and did not find is said, with where it looked
        assert facts["gpu driver"]["value"] == "none"
        assert "/sys/module/amdgpu" in facts["gpu driver"]["evidence"]
    if not list(Path("/opt").glob("rocm*")) and not list(Path("/usr/local").glob("cuda*")):
        assert facts["rocm / cuda"]["value"] == "none"


def test_probe_table_shows_more_than_list():
    listed = run_cli("hosts", "list", env={"COLUMNS": "200"}).stdout
    probed = run_cli("hosts", "probe", env={"COLUMNS": "200"})
    assert probed.returncode == 0, probed.stderr
    for word in ("cpu model", "memory", "kernel", "container runtime"):
        assert word in probed.stdout and word not in listed
