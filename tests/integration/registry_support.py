"""A real registry for the tests: Debian's docker-registry (distribution 2.8) on 127.0.0.1
with a TLS certificate made here, once with htpasswd basic auth and once with token auth
served by a small token issuer this module runs. Test modules import the fixtures.

The engine trusts the test CA through /etc/docker/certs.d/127.0.0.1:PORT/ca.crt (read per
connection: no dockerd restart), removed at the end. Only processes started here are stopped."""

from __future__ import annotations

import base64
import datetime as dt
import http.server
import json
import os
import shutil
import ssl
import subprocess
import sys
import threading
import time
import urllib.parse
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import dockerd
import pytest
import requests
import tlscerts

REGISTRY = shutil.which("docker-registry")
ROOT = Path(__file__).resolve().parents[2]
VALORCH = str(Path(sys.executable).with_name("valorch"))
USER, PASSWORD = "valorch", "s3cret-test-pw"
SMALL = "valorch/base:bookworm"


def run_cli(
    *args: str, env: dict | None = None, cwd: Path | None = None, timeout: float = 900
) -> subprocess.CompletedProcess:
    """The real console script with ``env`` added to this environment."""
    full = {k: v for k, v in os.environ.items() if k != "VALORCH_DB"}
    full.update(env or {})
    return subprocess.run(
        [VALORCH, *args], capture_output=True, text=True, cwd=cwd or ROOT, timeout=timeout, env=full
    )


def make_ca(d: Path) -> None:
    """A CA and a server certificate for 127.0.0.1 (openssl), and a self-signed token signer."""
    tlscerts.self_signed(d, "valorch-registry-ca", "ca.key", "ca.crt", ca=True)
    ca = ("ca.crt", "ca.key")
    tlscerts.signed(
        d, "127.0.0.1", "server.key", "server.crt", ca=ca, ext=tlscerts.SERVER_EXT, name="server"
    )
    tlscerts.self_signed(d, "valorch-token-signer", "signer.key", "signer.crt")


@dataclass
class Registry:
    kind: str  # "basic" | "token"
    port: int
    dir: Path
    proc: subprocess.Popen
    docker_config: Path
    extra: list = field(default_factory=list)

    @property
    def host(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def ca(self) -> Path:
        return self.dir / "ca.crt"

    def env(self, config: Path | None = None) -> dict[str, str]:
        return {
            "DOCKER_CONFIG": str(config or self.docker_config),
            "VALORCH_CERTS_D": str(self.dir / "certs.d"),
        }

    def docker(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        done = subprocess.run(
            ["docker", "--config", str(self.docker_config), *args],
            capture_output=True,
            text=True,
            timeout=600,
        )
        if check and done.returncode != 0:
            raise AssertionError(f"docker {' '.join(args)} failed: {done.stderr}")
        return done

    def push(self, local: str, name: str) -> str:
        """Push a local image as ``name`` (repo:tag on this registry); returns the pushed digest."""
        target = f"{self.host}/{name}"
        self.docker("tag", local, target)
        out = self.docker("push", target).stdout
        self.docker("rmi", target, check=False)
        return next(w for w in out.split() if w.startswith("sha256:"))

    def delete_tag(self, name: str) -> None:
        """Delete the manifest a tag points to (the tag disappears with it)."""
        repo, tag = name.rsplit(":", 1)
        auth = self.auth()
        head = requests.head(
            f"https://{self.host}/v2/{repo}/manifests/{tag}",
            verify=str(self.ca),
            auth=auth,
            headers={"Accept": "application/vnd.docker.distribution.manifest.v2+json"},
        )
        digest = head.headers["Docker-Content-Digest"]
        resp = requests.delete(
            f"https://{self.host}/v2/{repo}/manifests/{digest}", verify=str(self.ca), auth=auth
        )
        assert resp.status_code == 202, resp.text

    def auth(self):
        if self.kind == "basic":
            return (USER, PASSWORD)
        return _BearerFor(self)


class _BearerFor(requests.auth.AuthBase):
    def __init__(self, reg: Registry) -> None:
        self.reg = reg

    def __call__(self, r):
        repo = urllib.parse.urlparse(r.url).path.split("/v2/", 1)[1].rsplit("/manifests/", 1)[0]
        resp = requests.get(
            f"https://127.0.0.1:{self.reg.extra[0]}/token",
            verify=str(self.reg.ca),
            params={"service": "valorch-test", "scope": f"repository:{repo}:pull,push,delete"},
            auth=(USER, PASSWORD),
        )
        r.headers["Authorization"] = f"Bearer {resp.json()['token']}"
        return r


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def jwt_for(scope: str, key_pem: bytes, cert_pem: bytes, service: str) -> str:
    """A token the registry accepts: RS256, the signer's certificate in x5c (trusted through
    the registry's rootcertbundle), the scope's actions granted."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import padding

    cert = x509.load_pem_x509_certificate(cert_pem)
    key = serialization.load_pem_private_key(key_pem, None)
    access = []
    for item in scope.split(" ") if scope else ():
        kind, _, rest = item.partition(":")
        name, _, actions = rest.rpartition(":")
        access.append({"type": kind, "name": name, "actions": [a for a in actions.split(",") if a]})
    now = int(time.time())
    header = {
        "typ": "JWT",
        "alg": "RS256",
        "x5c": [base64.b64encode(cert.public_bytes(serialization.Encoding.DER)).decode()],
    }
    claims = {
        "iss": "valorch-test-issuer",
        "sub": USER,
        "aud": service,
        "exp": now + 600,
        "nbf": now - 10,
        "iat": now,
        "jti": uuid.uuid4().hex,
        "access": access,
    }
    signing = f"{_b64url(json.dumps(header).encode())}.{_b64url(json.dumps(claims).encode())}"
    sig = key.sign(signing.encode(), padding.PKCS1v15(), hashes.SHA256())
    return f"{signing}.{_b64url(sig)}"


def start_token_issuer(d: Path, port: int) -> http.server.ThreadingHTTPServer:
    key_pem, cert_pem = (d / "signer.key").read_bytes(), (d / "signer.crt").read_bytes()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            query = urllib.parse.parse_qs(urllib.parse.urlparse(self.path).query)
            header = self.headers.get("Authorization", "")
            ok = header == "Basic " + base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
            if not ok:
                self.send_response(401)
                self.end_headers()
                self.wfile.write(b'{"details": "wrong username or password"}')
                return
            scope = " ".join(query.get("scope", []))
            token = jwt_for(scope, key_pem, cert_pem, query.get("service", ["valorch-test"])[0])
            body = json.dumps(
                {
                    "token": token,
                    "access_token": token,
                    "expires_in": 600,
                    "issued_at": dt.datetime.now(dt.timezone.utc).isoformat(),
                }
            ).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(d / "server.crt", d / "server.key")
    server.socket = ctx.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def start_registry(base: Path, kind: str):
    if REGISTRY is None:
        pytest.fail(
            "docker-registry is not installed (apt-get install docker-registry; .ci/run does)"
        )
    d = base / kind
    d.mkdir(parents=True)
    make_ca(d)
    port = tlscerts.free_port()
    extra: list = []
    if kind == "basic":
        import bcrypt

        hashed = bcrypt.hashpw(PASSWORD.encode(), bcrypt.gensalt(rounds=5)).decode()
        (d / "htpasswd").write_text(f"{USER}:{hashed}\n")
        auth = {"htpasswd": {"realm": "valorch-test", "path": str(d / "htpasswd")}}
    else:
        tport = tlscerts.free_port()
        extra = [tport, start_token_issuer(d, tport)]
        auth = {
            "token": {
                "realm": f"https://127.0.0.1:{tport}/token",
                "service": "valorch-test",
                "issuer": "valorch-test-issuer",
                "rootcertbundle": str(d / "signer.crt"),
            }
        }
    config = {
        "version": 0.1,
        "log": {"level": "warn"},
        "storage": {"filesystem": {"rootdirectory": str(d / "data")}, "delete": {"enabled": True}},
        "http": {
            "addr": f"127.0.0.1:{port}",
            "tls": {"certificate": str(d / "server.crt"), "key": str(d / "server.key")},
        },
        "auth": auth,
    }
    (d / "config.yml").write_text(json.dumps(config))  # JSON is YAML
    with open(d / "registry.log", "w") as log:
        proc = subprocess.Popen(
            [REGISTRY, "serve", str(d / "config.yml")], stdout=log, stderr=subprocess.STDOUT
        )
    for _ in range(100):
        try:
            requests.get(f"https://127.0.0.1:{port}/v2/", verify=str(d / "ca.crt"), timeout=2)
            break
        except requests.exceptions.ConnectionError:
            if proc.poll() is not None:
                pytest.fail(f"docker-registry exited: {(d / 'registry.log').read_text()[-2000:]}")
            time.sleep(0.1)
    # the engine and valorch's certs.d lookup both trust the test CA
    engine_certs = Path("/etc/docker/certs.d") / f"127.0.0.1:{port}"
    engine_certs.mkdir(parents=True, exist_ok=True)
    shutil.copy(d / "ca.crt", engine_certs / "ca.crt")
    (d / "certs.d" / f"127.0.0.1:{port}").mkdir(parents=True)
    shutil.copy(d / "ca.crt", d / "certs.d" / f"127.0.0.1:{port}" / "ca.crt")
    cfg = d / "docker-config"
    cfg.mkdir()
    reg = Registry(kind, port, d, proc, cfg, extra)
    login = subprocess.run(
        ["docker", "--config", str(cfg), "login", "-u", USER, "--password-stdin", reg.host],
        input=PASSWORD,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert login.returncode == 0, login.stderr
    return reg, engine_certs


def stop_registry(reg: Registry, engine_certs: Path) -> None:
    reg.proc.terminate()
    try:
        reg.proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        reg.proc.kill()
    if reg.extra:
        reg.extra[1].shutdown()
    shutil.rmtree(engine_certs, ignore_errors=True)


@pytest.fixture(scope="session")
def registry_basic(tmp_path_factory):
    reg, certs = start_registry(tmp_path_factory.mktemp("registry"), "basic")
    try:
        yield reg
    finally:
        stop_registry(reg, certs)


@pytest.fixture(scope="session")
def registry_token(tmp_path_factory):
    reg, certs = start_registry(tmp_path_factory.mktemp("registry"), "token")
    try:
        yield reg
    finally:
        stop_registry(reg, certs)


@pytest.fixture(scope="session")
def tiny_images():
    """Three tiny distinct local images (a file each, no base), for tags that move."""
    names = []
    for n in ("a", "b", "c"):
        name = f"valorch/tiny:{n}"
        tar = subprocess.run(
            ["bash", "-c", f"d=$(mktemp -d) && echo {n} > $d/which && tar -C $d -c which"],
            capture_output=True,
            check=True,
        ).stdout
        subprocess.run(["docker", "import", "-", name], input=tar, capture_output=True, check=True)
        names.append(name)
    yield names
    for name in names:
        subprocess.run(["docker", "rmi", name], capture_output=True)


@pytest.fixture(scope="session")
def small_engine(tmp_path_factory):
    """A private dockerd whose data root is a 96 MiB tmpfs (vfs storage driver: no overlay on
    tmpfs needed), for the disk-space preflight. Stopped by its pid; the mount is removed."""
    base = Path("/tmp/valorch-d3")
    if base.exists():
        subprocess.run(["umount", str(base / "data")], capture_output=True)
        shutil.rmtree(base, ignore_errors=True)
    (base / "data").mkdir(parents=True)
    mount = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=96m", "tmpfs", str(base / "data")],
        capture_output=True,
        text=True,
    )
    if mount.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mount.stderr}")
    hosts = base / "hosts.yaml"
    try:
        with dockerd.running(base, "vlch-d3br0", "--storage-driver", "vfs") as sock:
            hosts.write_text(f"hosts:\n  - name: small\n    endpoint: unix://{sock}\n")
            yield {"sock": sock, "hosts": hosts}
    finally:
        subprocess.run(["umount", str(base / "data")], capture_output=True)


@pytest.fixture(scope="session")
def random_image():
    """A local image of 24 MiB of random bytes (does not compress; shares no layer with anything)."""
    name = f"valorch/random:{uuid.uuid4().hex[:8]}"
    tar = subprocess.run(
        [
            "bash",
            "-c",
            "d=$(mktemp -d) && head -c 25165824 /dev/urandom > $d/blob && "
            "tar -C $d -c blob && rm -rf $d",
        ],
        capture_output=True,
        check=True,
    ).stdout
    subprocess.run(["docker", "import", "-", name], input=tar, capture_output=True, check=True)
    yield name
    subprocess.run(["docker", "rmi", name], capture_output=True)


@pytest.fixture(scope="session")
def big_random_image():
    """A local image of 384 MiB of random bytes: a pull from the test registry takes long
    enough to be interrupted."""
    name = f"valorch/random-big:{uuid.uuid4().hex[:8]}"
    tar = subprocess.run(
        [
            "bash",
            "-c",
            "d=$(mktemp -d) && head -c 402653184 /dev/urandom > $d/blob && "
            "tar -C $d -c blob && rm -rf $d",
        ],
        capture_output=True,
        check=True,
    ).stdout
    subprocess.run(["docker", "import", "-", name], input=tar, capture_output=True, check=True)
    yield name
    subprocess.run(["docker", "rmi", name], capture_output=True)
