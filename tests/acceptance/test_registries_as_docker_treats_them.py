"""Registries as the Docker engine treats them, with Debian's docker-registry serving plain
HTTP: on loopback it needs no configuration (the engine pushes to it, valorch checks and
pulls from it); on an address the engine does not list as insecure the TLS failure's hint
names the real fix (the engine's insecure-registries, or an explicit endpoint); the
explicit VALORCH_REGISTRY_ENDPOINTS mapping still wins. ``images check`` shows every digest
whole, so a digest copied from it resolves."""

import json
import shutil
import socket
import subprocess
import time

import pytest
from root_helpers import run_cli

REGISTRY = shutil.which("docker-registry")
SMALL = "valorch/base:bookworm"

pytestmark = pytest.mark.docker


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _outside_address() -> str | None:
    """An address of this machine that is not loopback (the engine does not treat it as insecure)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.connect(("192.0.2.1", 9))  # no packet is sent: this only picks the outgoing interface
            address = s.getsockname()[0]
        except OSError:
            return None
    return None if address.startswith("127.") else address


def _serve(tmp_path, address: str):
    if REGISTRY is None:
        pytest.fail(
            "docker-registry is not installed (apt-get install docker-registry; .ci/run does)"
        )
    port = _free_port()
    config = {
        "version": 0.1,
        "log": {"level": "warn"},
        "http": {"addr": f"{address}:{port}"},
        "storage": {"filesystem": {"rootdirectory": str(tmp_path / f"data-{port}")}},
    }
    (tmp_path / f"config-{port}.yml").write_text(json.dumps(config))
    with open(tmp_path / f"registry-{port}.log", "w") as log:
        proc = subprocess.Popen(
            [REGISTRY, "serve", str(tmp_path / f"config-{port}.yml")],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    for _ in range(200):
        try:
            socket.create_connection((address, port), timeout=1).close()
            break
        except OSError:
            assert proc.poll() is None, (tmp_path / f"registry-{port}.log").read_text()
            time.sleep(0.05)
    return proc, f"{address}:{port}"


@pytest.fixture
def loopback_registry(tmp_path):
    proc, host = _serve(tmp_path, "127.0.0.1")
    yield host
    proc.terminate()
    proc.wait(timeout=20)


def _catalog(tmp_path, alias, reference, digest=None):
    d = tmp_path / "images"
    d.mkdir(parents=True, exist_ok=True)
    (d / "reg.yaml").write_text(
        f"family: reg\nbackend: cpu\nimages:\n  - alias: {alias}\n    reference: {reference}\n"
        + (f'    digest: "{digest}"\n' if digest else "")
    )
    return d


def _push(local: str, target: str) -> str:
    subprocess.run(["docker", "tag", local, target], check=True, capture_output=True)
    try:
        out = subprocess.run(
            ["docker", "push", target], check=True, capture_output=True, text=True
        ).stdout
    finally:
        subprocess.run(["docker", "rmi", target], capture_output=True)
    return next(w for w in out.split() if w.startswith("sha256:"))


def test_loopback_plain_http_registry_needs_no_configuration(tmp_path, loopback_registry):
    reference = f"{loopback_registry}/team/base:v1"
    digest = _push(SMALL, reference)  # the engine pushes to it without complaint
    catalog = _catalog(tmp_path, "base_v1", reference, digest)
    env = {"DOCKER_CONFIG": str(tmp_path / "no-docker-config"), "VALORCH_REGISTRY_ENDPOINTS": ""}
    done = run_cli("images", "check", "--catalog", str(catalog), "--json", env=env)
    assert done.returncode == 0, done.stderr
    (found,) = json.loads(done.stdout)["images"]
    assert found["state"] == "same" and found["current_digest"] == digest
    # the table, piped, shows both digests whole: 71 characters each, nothing cut
    table = run_cli("images", "check", "--catalog", str(catalog), env=env).stdout
    assert table.count(digest) == 2, table
    # a digest copied from the table resolves: pinned, pulled and run by that digest
    copied = next(w for w in table.split() if w.startswith("sha256:"))
    pinned = _catalog(tmp_path / "pinned", "base_pinned", f"{loopback_registry}/team/base@{copied}")
    ran = run_cli(
        "run",
        "--image",
        "base_pinned",
        "--catalog",
        str(pinned),
        "--suite",
        "selftest",
        "--check",
        "selftest.pass",
        "--no-matrix",
        "--json",
        "--db",
        str(tmp_path / "v.sqlite"),
        env=env,
    )
    assert ran.returncode == 0, ran.stderr[-2000:]
    assert json.loads(ran.stdout)[0]["image"]["digest"] == digest
    subprocess.run(
        ["docker", "rmi", f"{loopback_registry}/team/base@{digest}"], capture_output=True
    )


def test_explicit_endpoint_override_is_kept(tmp_path, loopback_registry):
    reference = f"{loopback_registry}/team/over:v1"
    digest = _push(SMALL, reference)
    catalog = _catalog(tmp_path, "over", "registry.invalid/team/over:v1", digest)
    env = {"VALORCH_REGISTRY_ENDPOINTS": f"registry.invalid=http://{loopback_registry}"}
    done = run_cli("images", "check", "--catalog", str(catalog), "--json", env=env)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["images"][0]["current_digest"] == digest


def test_plain_http_registry_not_marked_insecure_gets_the_real_fix(tmp_path):
    address = _outside_address()
    if address is None:
        pytest.skip("this machine has no address besides loopback")
    info = json.loads(
        subprocess.run(
            ["docker", "info", "--format", "{{json .RegistryConfig}}"],
            capture_output=True,
            text=True,
        ).stdout
    )
    proc, host = _serve(tmp_path, address)
    try:
        if info.get("IndexConfigs", {}).get(host, {}).get("Secure") is False:
            pytest.skip(f"the engine lists {host} as insecure")
        catalog = _catalog(tmp_path, "outside", f"{host}/team/x:v1")
        done = run_cli(
            "images",
            "check",
            "--catalog",
            str(catalog),
            "--json",
            env={"VALORCH_REGISTRY_ENDPOINTS": ""},
        )
        assert done.returncode == 3, done.stdout + done.stderr
        # images check goes on past it: the image is unreachable, its row says why and the fix
        (row,) = json.loads(done.stdout)["images"]
        said = row["message"]
        assert row["state"] == "unreachable" and "wrong version number" in said
        assert (
            "insecure-registries" in said
            and f"VALORCH_REGISTRY_ENDPOINTS={host}=http://{host}" in said
        )
        assert "--ca" not in said and "Traceback" not in done.stderr
    finally:
        proc.terminate()
        proc.wait(timeout=20)
