"""``hosts check`` reports the free space under the engine's Docker root even when no probe
image is on the engine: for a local engine it takes ``docker info``'s DockerRootDir and
measures it here, and says which evidence it used (table and ``--json``)."""

import json

import pytest
from root_helpers import run_cli

pytestmark = pytest.mark.docker

NO_SUCH = "valorch/absent-probe:never-built"


def test_disk_figure_without_probe_image_names_its_evidence(tmp_path):
    proc = run_cli("hosts", "check", "--probe-image", NO_SUCH, "--json", db=tmp_path / "v.sqlite")
    assert "Traceback" not in proc.stderr
    (host,) = json.loads(proc.stdout)["hosts"]
    assert isinstance(host["free_gib"], float) and host["free_gib"] >= 0
    assert "DockerRootDir" in host["disk_evidence"] and host["docker_root"] in host["disk_evidence"]
    assert "no probe image" in host["disk_evidence"]
    assert not any("disk" in p for p in host["problems"])
    assert proc.returncode == 0, proc.stdout


def test_table_shows_disk_and_where_it_came_from(tmp_path):
    proc = run_cli(
        "hosts",
        "check",
        "--probe-image",
        NO_SUCH,
        db=tmp_path / "v.sqlite",
        env={"COLUMNS": "300"},
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "disk evidence" in proc.stdout
    assert "DockerRootDir" in proc.stdout and "no probe image" in proc.stdout
    row = next(line for line in proc.stdout.splitlines() if "DockerRootDir" in line)
    free = row.split("│")[3].strip()
    assert float(free) >= 0
