import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest
from run_support import containers_of, run_ids_in

from orchestrator.executors.slurm.client import SlurmCluster

START_SLURM = Path(__file__).resolve().parents[2] / "scripts" / "start-slurm.sh"
SLURM_CONF = Path(os.environ.get("VALORCH_SLURM_DIR", "/etc/slurm")) / "slurm.conf"

TEST_IMAGES = (
    "valorch/test:debian-torch",
    "valorch/test:pip-torch",
    "valorch/base:bullseye",
    "valorch/base:bookworm",
)


def pytest_collection_modifyitems(items):
    for item in items:
        if (
            "integration" in str(item.fspath)
            and "slurm" not in item.keywords
            and "postgres" not in item.keywords
            and "pg_server" not in getattr(item, "fixturenames", ())
        ):
            item.add_marker(pytest.mark.docker)


@pytest.fixture(scope="session", autouse=True)
def docker_engine(request):
    """Integration tests need the real engine and the local test images; `make test`
    provides both (scripts/ensure-engine.sh, scripts/build-test-images.sh)."""
    if not any("docker" in item.keywords for item in request.session.items):
        return
    if subprocess.run(["docker", "info"], capture_output=True).returncode != 0:
        pytest.fail("no Docker engine answers: run scripts/ensure-engine.sh (make test does)")
    missing = [
        i
        for i in TEST_IMAGES
        if subprocess.run(["docker", "image", "inspect", i], capture_output=True).returncode != 0
    ]
    if missing:
        pytest.fail(f"test images missing: {missing}; run make test-images")


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


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _certs(d: Path) -> None:
    def ssl(*args):
        subprocess.run(["openssl", *args], cwd=d, check=True, capture_output=True)

    ssl(
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-days",
        "2",
        "-subj",
        "/CN=valorch-test-ca",
        "-addext",
        "basicConstraints=critical,CA:TRUE",
        "-addext",
        "keyUsage=critical,keyCertSign,cRLSign",
        "-keyout",
        "ca-key.pem",
        "-out",
        "ca.pem",
    )
    # strict X.509 checks (recent Python ssl) want key usages and the authority key id
    leaf = (
        "authorityKeyIdentifier=keyid,issuer\nkeyUsage=critical,digitalSignature,keyEncipherment\n"
    )
    (d / "server.ext").write_text(
        leaf + "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n"
    )
    (d / "client.ext").write_text(leaf + "extendedKeyUsage=clientAuth\n")
    for who in ("server", "client"):
        ssl(
            "req",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-subj",
            f"/CN={who}",
            "-keyout",
            f"{who}-key.pem",
            "-out",
            f"{who}.csr",
        )
        ssl(
            "x509",
            "-req",
            "-in",
            f"{who}.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca-key.pem",
            "-CAcreateserial",
            "-days",
            "2",
            "-extfile",
            f"{who}.ext",
            "-out",
            f"{who}.pem",
        )


BRIDGE = "vlch-d2br0"


@pytest.fixture(scope="session")
def engine2():
    if not shutil.which("dockerd") or not shutil.which("openssl"):
        pytest.skip("dockerd and openssl are needed for a second engine")
    if ROOT_DIR.exists():
        pid = ROOT_DIR / "docker.pid"
        if pid.exists():  # a previous session's engine that was not stopped
            try:
                os.kill(int(pid.read_text()), signal.SIGTERM)
                time.sleep(3)
            except (ProcessLookupError, ValueError):
                pass
        shutil.rmtree(ROOT_DIR / "certs", ignore_errors=True)
    certs = ROOT_DIR / "certs"
    certs.mkdir(parents=True)
    _certs(certs)
    port = _free_port()
    sock = ROOT_DIR / "docker.sock"
    # Its own bridge: with --bridge=none a dockerd deletes the host's docker0, which
    # would take the first engine's default network away from every later test.
    subprocess.run(["ip", "link", "add", BRIDGE, "type", "bridge"], capture_output=True)
    log = open(ROOT_DIR / "dockerd.log", "w")
    proc = subprocess.Popen(
        [
            "dockerd",
            "--host",
            f"unix://{sock}",
            "--host",
            f"tcp://127.0.0.1:{port}",
            "--tlsverify",
            "--tlscacert",
            str(certs / "ca.pem"),
            "--tlscert",
            str(certs / "server.pem"),
            "--tlskey",
            str(certs / "server-key.pem"),
            "--data-root",
            str(ROOT_DIR / "data"),
            "--exec-root",
            str(ROOT_DIR / "exec"),
            "--pidfile",
            str(ROOT_DIR / "docker.pid"),
            f"--bridge={BRIDGE}",
            "--iptables=false",
            "--ip-masq=false",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        for _ in range(120):
            if (
                subprocess.run(
                    ["docker", "-H", f"unix://{sock}", "version"], capture_output=True
                ).returncode
                == 0
            ):
                break
            if proc.poll() is not None:
                pytest.fail(
                    f"second dockerd exited: {(ROOT_DIR / 'dockerd.log').read_text()[-2000:]}"
                )
            time.sleep(0.5)
        for image in IMAGES:
            present = (
                subprocess.run(
                    ["docker", "-H", f"unix://{sock}", "image", "inspect", image],
                    capture_output=True,
                ).returncode
                == 0
            )
            if not present:
                subprocess.run(
                    f"docker save {image} | docker -H unix://{sock} load",
                    shell=True,
                    check=True,
                    capture_output=True,
                )
        yield {"port": port, "certs": certs, "sock": sock}
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()
        subprocess.run(["ip", "link", "delete", BRIDGE], capture_output=True)


# Test modules of other directories do `from conftest import ROOT, VALORCH, run_cli`; pytest
# registers each directory's conftest.py under the one module name "conftest", so whichever
# was imported last answers: every conftest re-exports the root conftest's helpers.
def _root_conftest():
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "_valorch_root_conftest", Path(__file__).resolve().parents[1] / "conftest.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_ROOT_CONFTEST = _root_conftest()
ROOT, VALORCH, run_cli = _ROOT_CONFTEST.ROOT, _ROOT_CONFTEST.VALORCH, _ROOT_CONFTEST.run_cli
