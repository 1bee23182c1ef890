import os
import shutil
import subprocess
from pathlib import Path

import dockerd
import pytest
import tlscerts
from registry_support import (  # noqa: F401 - the registry fixtures, for this directory's tests
    big_random_image,
    random_image,
    registry_basic,
    registry_token,
    small_engine,
    tiny_images,
)
from run_support import containers_of, run_ids_in

from orchestrator.executors.slurm.client import SlurmCluster

START_SLURM = Path(__file__).resolve().parents[2] / "scripts" / "start-slurm.sh"
SLURM_CONF = Path(os.environ.get("VALORCH_SLURM_DIR", "/etc/slurm")) / "slurm.conf"


def pytest_collection_modifyitems(items):
    for item in items:
        if (
            "integration" in str(item.fspath)
            and "slurm" not in item.keywords
            and "postgres" not in item.keywords
            and "pg_server" not in getattr(item, "fixturenames", ())
        ):
            item.add_marker(pytest.mark.docker)


@pytest.fixture
def leftover_containers(cli):
    """How many containers the test's own runs left (by their org.valorch.run label):
    several agents and CI jobs share the engine, so other valorch containers are not counted."""

    def count(db=None):
        return len(containers_of(run_ids_in(db or cli.db)))

    return count


@pytest.fixture(scope="session")
def cluster() -> SlurmCluster:
    """The real Slurm test cluster (scripts/start-slurm.sh: slurmctld, two slurmd, munge)."""
    if os.geteuid() != 0:
        pytest.skip(
            "the Slurm test cluster needs root (scripts/start-slurm.sh installs and starts daemons)"
        )
    proc = subprocess.run(["bash", str(START_SLURM)], capture_output=True, text=True, timeout=900)
    if proc.returncode != 0:
        pytest.fail(
            f"scripts/start-slurm.sh failed (exit {proc.returncode}):\n{proc.stderr}\n{proc.stdout}"
        )
    return SlurmCluster(conf=SLURM_CONF, partition="valorch")


# A second, real Docker engine (tests/integration/test_remote_engine.py: tcp:// with mutual TLS;
# test_remote_ssh.py: ssh://). Its own socket, data root, exec root, pid file and bridge
# (not docker0), no iptables rules; stopped (its pid only) at the end of the session.
ROOT_DIR = Path("/tmp/valorch-d2")
IMAGES = ("valorch/base:bookworm", "valorch/base:bullseye")


def _certs(d: Path) -> None:
    """A CA, and a server and a client certificate it signed (mutual TLS)."""
    tlscerts.self_signed(d, "valorch-test-ca", "ca-key.pem", "ca.pem", ca=True)
    ca = ("ca.pem", "ca-key.pem")
    tlscerts.signed(
        d, "server", "server-key.pem", "server.pem", ca=ca, ext=tlscerts.SERVER_EXT, name="server"
    )
    tlscerts.signed(
        d, "client", "client-key.pem", "client.pem", ca=ca, ext=tlscerts.CLIENT_EXT, name="client"
    )


BRIDGE = "vlch-d2br0"


@pytest.fixture(scope="session")
def engine2():
    if not shutil.which("dockerd") or not shutil.which("openssl"):
        pytest.skip("dockerd and openssl are needed for a second engine")
    dockerd.stop_stale(ROOT_DIR)
    shutil.rmtree(ROOT_DIR / "certs", ignore_errors=True)
    certs = ROOT_DIR / "certs"
    certs.mkdir(parents=True)
    _certs(certs)
    port = tlscerts.free_port()
    tls = ["--host", f"tcp://127.0.0.1:{port}", "--tlsverify"]
    tls += ["--tlscacert", str(certs / "ca.pem"), "--tlscert", str(certs / "server.pem")]
    tls += ["--tlskey", str(certs / "server-key.pem")]
    with dockerd.running(ROOT_DIR, BRIDGE, *tls, images=IMAGES) as sock:
        yield {"port": port, "certs": certs, "sock": sock}


# Test modules of other directories do `from conftest import ROOT, VALORCH, run_cli`, and
# whichever conftest.py was imported last answers (tests/root_helpers.py says why).
from root_helpers import ROOT, VALORCH, run_cli  # noqa: F401 - re-exported
