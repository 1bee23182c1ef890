"""A host fault made to happen for real: the same image digest runs on two hosts of the same
class (the test engine, and a second real dockerd whose containers get a file-descriptor
limit of 256, a common misconfiguration of a fleet host); a check that needs 1024 open files
passes on the first and fails on the second. The red check says "host fault", naming the
host where the same digest passes, with both runs; in ``results show``, ``diff`` and the run
page."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import dockerd
from root_helpers import run_cli

pytestmark = pytest.mark.docker

IMAGE = "valorch/base:bullseye"
NEEDS_FILES = """name: fleet
images: [app]
suites:
  - name: command
    commands:
      - id: open-files
        argv: [sh, -c, 'n=$(ulimit -n); echo "nofile $n"; test "$n" -ge 1024']
        feature: a workload that opens 1024 files
"""


@pytest.fixture(scope="module")
def engine2():
    base = Path("/tmp/valorch-triage-engine2")
    dockerd.stop_stale(base)
    with dockerd.running(
        base, "vlch-tr-br0", "--default-ulimit", "nofile=256:256", images=(IMAGE,)
    ) as sock:
        yield f"unix://{sock}"


def test_same_digest_passing_on_another_host_of_its_class_is_a_host_fault(engine2, tmp_path):
    catalog = tmp_path / "images"
    catalog.mkdir()
    (catalog / "app.yaml").write_text(
        f"family: t\nbackend: cpu\nlocal: true\nimages:\n  - alias: app\n    reference: {IMAGE}\n"
    )
    (tmp_path / "job.yaml").write_text(NEEDS_FILES)
    env = {"VALORCH_DB": str(tmp_path / "v.sqlite")}
    runs = {}
    for host, endpoint in (("good-host", "unix:///var/run/docker.sock"), ("low-limit", engine2)):
        hosts = tmp_path / f"{host}.yaml"
        hosts.write_text(f"hosts:\n  - name: {host}\n    endpoint: {endpoint}\n")
        p = run_cli(
            "run",
            "--job",
            str(tmp_path / "job.yaml"),
            "--catalog",
            str(catalog),
            "--hosts",
            str(hosts),
            "--no-gate",
            "--no-matrix",
            "--json",
            env=env,
        )
        assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr
        (run,) = json.loads(p.stdout)
        runs[host] = run
    assert [r["status"] for r in runs["good-host"]["results"]] == ["pass"]
    assert [r["status"] for r in runs["low-limit"]["results"]] == ["fail"]
    bad = runs["low-limit"]["run"]
    shown = run_cli("results", "show", bad, "--json", env=env)
    assert shown.returncode == 0, shown.stderr
    why = json.loads(shown.stdout)["triage"]["command.open-files"]
    assert why["class"] == "host fault", why
    assert "passes on host good-host" in why["reason"] and "fails on low-limit" in why["reason"]
    assert set(why["hosts"]) == {"good-host", "low-limit"}
    assert set(why["runs"]) == {bad, runs["good-host"]["run"]}
    term = run_cli("results", "show", bad, env={**env, "COLUMNS": "300"})
    assert "host fault" in term.stdout and "good-host" in term.stdout
    site = tmp_path / "site"
    p = run_cli("site", "build", "--out", str(site), env=env)
    assert p.returncode == 0, p.stderr
    page = (site / "runs" / f"{bad}.html").read_text()
    assert "host fault" in page and "good-host" in page
