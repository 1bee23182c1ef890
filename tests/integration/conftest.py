import os
import subprocess
from pathlib import Path

import pytest

from orchestrator.executors.slurm import SlurmCluster

START_SLURM = Path(__file__).resolve().parents[2] / "scripts" / "start-slurm.sh"
SLURM_CONF = Path(os.environ.get("VALORCH_SLURM_DIR", "/etc/slurm")) / "slurm.conf"

TEST_IMAGES = ("valorch/test:debian-torch", "valorch/test:pip-torch", "valorch/base:bullseye",
               "valorch/base:bookworm")


def pytest_collection_modifyitems(items):
    for item in items:
        if "integration" in str(item.fspath) and "slurm" not in item.keywords:
            item.add_marker(pytest.mark.docker)


@pytest.fixture(scope="session", autouse=True)
def docker_engine(request):
    """Integration tests need the real engine and the local test images; `make test`
    provides both (scripts/ensure-engine.sh, scripts/build-test-images.sh)."""
    if not any("docker" in item.keywords for item in request.session.items):
        return
    if subprocess.run(["docker", "info"], capture_output=True).returncode != 0:
        pytest.fail("no Docker engine answers: run scripts/ensure-engine.sh (make test does)")
    missing = [i for i in TEST_IMAGES
               if subprocess.run(["docker", "image", "inspect", i], capture_output=True).returncode != 0]
    if missing:
        pytest.fail(f"test images missing: {missing}; run make test-images")


@pytest.fixture
def leftover_containers():
    def count():
        out = subprocess.run(["docker", "ps", "-aq", "--filter", "label=org.valorch"],
                             capture_output=True, text=True, check=True).stdout
        return len(out.split())
    return count


@pytest.fixture(scope="session")
def cluster() -> SlurmCluster:
    """The real Slurm test cluster (scripts/start-slurm.sh: slurmctld, two slurmd, munge)."""
    if os.geteuid() != 0:
        pytest.skip("the Slurm test cluster needs root (scripts/start-slurm.sh installs and starts daemons)")
    proc = subprocess.run(["bash", str(START_SLURM)], capture_output=True, text=True, timeout=900)
    if proc.returncode != 0:
        pytest.fail(f"scripts/start-slurm.sh failed (exit {proc.returncode}):\n{proc.stderr}\n{proc.stdout}")
    return SlurmCluster(conf=SLURM_CONF, partition="valorch")
