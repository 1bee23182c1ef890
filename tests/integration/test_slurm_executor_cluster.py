"""`valorch run --executor slurm` against the real test cluster (scripts/start-slurm.sh):
each task is an sbatch job whose step runs the container on the allocated node.

Nodes: valorch-rocm0 (rocm, gfx942, gpu:mi300x:2) and valorch-cuda0 (cuda, sm_90,
gpu:h100:1); the GPUs are /dev/null clones, so the containers see no real device
(the executor never passes them: it maps Slurm's GPU indices to /dev/kfd and
/dev/dri/renderD<128+i>, which do not exist here, and says so in the job log).
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest

from orchestrator.catalog.core import Catalog
from orchestrator.executors.slurm.client import TERMINAL, SlurmCluster
from orchestrator.executors.slurm.executor import SlurmExecutor
from orchestrator.scheduling.plan import suite_checks
from orchestrator.spec import HostSpec, SuiteRef, Task

pytestmark = [pytest.mark.slurm, pytest.mark.docker]

ROOT = Path(__file__).resolve().parents[2]
START = ROOT / "scripts" / "start-slurm.sh"
CONF = Path(os.environ.get("VALORCH_SLURM_DIR", "/etc/slurm")) / "slurm.conf"
ROCM_CATALOG = """\
family: rocm-test
backend: rocm
local: true
images:
  - alias: rocm_test_bookworm
    reference: valorch/base:bookworm
    components: {python: "3.11"}
"""


def stored(db: Path) -> list[dict]:
    with sqlite3.connect(db) as con:
        rows = con.execute("SELECT id, executor, meta FROM run").fetchall()
    return [
        {"id": r[0], "executor": r[1], "meta": json.loads(r[2]) if isinstance(r[2], str) else r[2]}
        for r in rows
    ]


def leftover_containers(run_id: str) -> str:
    return subprocess.run(
        ["docker", "ps", "-aq", "--filter", f"label=org.valorch.run={run_id}"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()


def test_cpu_image_runs_as_a_slurm_job(cluster: SlurmCluster, cli, tmp_path: Path) -> None:
    spool = tmp_path / "spool"
    proc = cli(
        "run",
        "--executor",
        "slurm",
        "--partition",
        "valorch",
        "--slurm-spool",
        str(spool),
        "--image",
        "cpu_debian12_py3.11_pytorch_2.13",
        "--json",
        env={"SLURM_CONF": str(CONF)},
    )
    assert proc.returncode == 0, proc.stderr
    [run] = json.loads(proc.stdout)
    assert run["executor"] == "slurm" and run["host"] == "slurm-valorch"
    by_check = {r["check"]: r for r in run["results"]}
    assert by_check["env.facts"]["metrics"]["torch"].startswith("2.13.0")
    assert by_check["env.version.pytorch"]["status"] == "pass"
    assert by_check["smoke.matmul.fp32"]["status"] == "pass"
    assert run["image"]["digest"].startswith("sha256:"), run["image"]
    [row] = stored(cli.db)
    slurm = row["meta"]["smoke"]["probe"]["slurm"]
    assert slurm["job_id"].isdigit() and slurm["state"] == "COMPLETED"
    assert slurm["node"] in {"valorch-rocm0", "valorch-cuda0"}
    assert slurm["exit"] == "0"
    assert (spool / row["id"] / f"valorch-{slurm['job_id']}.stdout").stat().st_size > 0
    assert leftover_containers(row["id"]) == ""


def test_rocm_image_lands_on_the_rocm_node_with_its_gpu(
    cluster: SlurmCluster, cli, tmp_path: Path
) -> None:
    catalog = tmp_path / "catalog"
    catalog.mkdir()
    (catalog / "rocm.yaml").write_text(ROCM_CATALOG)
    proc = cli(
        "run",
        "--executor",
        "slurm",
        "--partition",
        "valorch",
        "--slurm-spool",
        str(tmp_path / "spool"),
        "--catalog",
        str(catalog),
        "--image",
        "rocm_test_bookworm",
        "--json",
        env={"SLURM_CONF": str(CONF)},
    )
    assert proc.returncode == 0, proc.stderr
    [run] = json.loads(proc.stdout)
    facts = {r["check"]: r for r in run["results"]}["env.facts"]
    assert (
        facts["status"] == "pass" and facts["metrics"]["torch"] is None
    )  # a base image: no framework
    [row] = stored(cli.db)
    slurm = row["meta"]["smoke"]["probe"]["slurm"]
    assert slurm["node"] == "valorch-rocm0"
    assert slurm["gpus"] in {"0", "1"}
    # what Docker recorded as the container's environment: renumbered from 0, the node's index kept
    assert slurm["container_env"]["ROCR_VISIBLE_DEVICES"] == "0"
    assert slurm["container_env"]["VALORCH_GPUS"] == slurm["gpus"]
    assert leftover_containers(row["id"]) == ""


def test_gfx90a_is_unmatched_before_anything_runs(
    cluster: SlurmCluster, cli, tmp_path: Path
) -> None:
    catalog = tmp_path / "catalog"
    catalog.mkdir()
    (catalog / "rocm.yaml").write_text(ROCM_CATALOG)
    job = tmp_path / "mi250.yaml"
    job.write_text("name: mi250\nimages: [rocm_test_bookworm]\nsuites: [smoke]\nlabels: [gfx90a]\n")
    proc = cli(
        "run",
        "--executor",
        "slurm",
        "--partition",
        "valorch",
        "--slurm-spool",
        str(tmp_path / "spool"),
        "--catalog",
        str(catalog),
        "--job",
        str(job),
        env={"SLURM_CONF": str(CONF)},
    )
    assert proc.returncode == 3, proc.stderr
    assert "unmatched on Slurm" in proc.stderr and "gfx90a" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not cli.db.exists() or stored(cli.db) == []


def _task(alias: str, suite: SuiteRef, catalog_dir: Path = ROOT / "images") -> Task:
    image = Catalog.load(catalog_dir).resolve(alias)
    return Task(
        image=image, suite=suite, host=HostSpec(name="slurm-valorch"), checks=suite_checks(suite)
    )


def test_slurm_refusal_is_an_unmatched_infrastructure_error(
    cluster: SlurmCluster, tmp_path: Path
) -> None:
    # rocm and sm_90 both exist, on different nodes: Slurm itself refuses the job
    catalog = tmp_path / "catalog"
    catalog.mkdir()
    (catalog / "rocm.yaml").write_text(ROCM_CATALOG)
    task = _task("rocm_test_bookworm", SuiteRef(name="smoke"), catalog)
    execution = SlurmExecutor(cluster, tmp_path / "spool", labels=("sm_90",)).execute(
        task, "unmatched-run"
    )
    assert execution.infra_error.startswith("unmatched on Slurm")
    assert "Requested node configuration is not available" in execution.infra_error
    assert {r.status for r in execution.results} == {"error"}
    assert len(execution.results) == len(task.checks)


def test_interrupt_cancels_the_job_and_removes_the_container(
    cluster: SlurmCluster, tmp_path: Path
) -> None:
    suite = SuiteRef(name="selftest", checks=("selftest.pass", "selftest.hang"), deadline=600)
    task = _task("cpu_debian11_py3.9", suite)
    seen: list[str] = []

    def interrupt(result) -> None:
        seen.append(result.check)
        raise KeyboardInterrupt  # Ctrl-C while selftest.hang is running

    executor = SlurmExecutor(cluster, tmp_path / "spool")
    with pytest.raises(KeyboardInterrupt):
        executor.execute(task, "interrupted-run", interrupt)
    assert seen == ["selftest.pass"]
    [workdir] = [p for p in (tmp_path / "spool").iterdir() if p.is_dir()]
    [stdout] = list(workdir.glob("valorch-*.stdout"))
    job = stdout.name.split("-")[1].split(".")[0]
    end = time.monotonic() + 60
    while cluster.state(job) not in TERMINAL and time.monotonic() < end:
        time.sleep(0.25)
    assert cluster.state(job) == "CANCELLED"
    while leftover_containers("interrupted-run") and time.monotonic() < end:
        time.sleep(0.25)
    assert leftover_containers("interrupted-run") == ""  # the step's EXIT trap removed it
