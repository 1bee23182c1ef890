"""What valorch reads from a registry is bounded (docs/registries.md, "What valorch reads from
a registry"): a body over its cap, JSON nested past the limit, a body cut short or longer
than it says, and a registry that trickles are each a clear error naming the registry, what
was read and the cap (exit 3, the registry's fault), never a traceback or a command that
does not end. Through the real CLI (`valorch verify`, `valorch images check`) against a
misbehaving HTTP server on 127.0.0.1 that the test starts."""

from __future__ import annotations

import contextlib
import hashlib
import json
import socket
import subprocess
import threading
import time

import pytest

from tests.conftest import run_cli

DIGEST = "sha256:" + "ab" * 32
ATT = "manifests/" + DIGEST.replace(":", "-") + ".att"


def _head(status: str, headers: dict[str, str]) -> bytes:
    lines = [f"HTTP/1.1 {status}", "Connection: close", *(f"{k}: {v}" for k, v in headers.items())]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def _json(conn, body: bytes, extra: dict[str, str] | None = None) -> None:
    headers = {"Content-Type": "application/vnd.oci.image.manifest.v1+json"}
    conn.sendall(_head("200 OK", {**headers, "Content-Length": str(len(body)), **(extra or {})}))
    conn.sendall(body)


def _chunked(conn, pieces) -> None:
    conn.sendall(
        _head(
            "200 OK",
            {
                "Content-Type": "application/vnd.oci.image.manifest.v1+json",
                "Transfer-Encoding": "chunked",
            },
        )
    )
    for piece in pieces:
        conn.sendall(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
    conn.sendall(b"0\r\n\r\n")


class Registry:
    """A registry API on the loopback that answers the tag's HEAD with ``DIGEST``, has no
    referrers API, and answers the attestation tag (``ATT``) with ``self.att(conn)``."""

    def __init__(self) -> None:
        self.srv = socket.socket()
        self.srv.bind(("127.0.0.1", 0))
        self.srv.listen(16)
        self.host = f"127.0.0.1:{self.srv.getsockname()[1]}"
        self.att = lambda conn: _json(conn, b'{"layers": []}')
        self.blob: bytes = b""
        self.head = None  # a replacement for the tag's HEAD answer
        self.stop = threading.Event()
        threading.Thread(target=self._loop, daemon=True).start()

    @property
    def env(self) -> dict[str, str]:
        return {"VALORCH_REGISTRY_ENDPOINTS": f"{self.host}=http://{self.host}"}

    def _loop(self) -> None:
        self.srv.settimeout(0.2)
        while not self.stop.is_set():
            try:
                conn, _ = self.srv.accept()
            except OSError:
                continue
            threading.Thread(target=self._one, args=(conn,), daemon=True).start()

    def _one(self, conn) -> None:
        with conn, contextlib.suppress(OSError):
            data = b""
            while b"\r\n\r\n" not in data:
                chunk = conn.recv(4096)
                if not chunk:
                    return
                data += chunk
            method, path = data.split(b" ", 2)[:2]
            path = path.decode().split("?")[0]
            if path.endswith("/manifests/1") and method == b"HEAD":
                if self.head is not None:
                    self.head(conn)
                    return
                conn.sendall(
                    _head(
                        "200 OK",
                        {
                            "Docker-Content-Digest": DIGEST,
                            "Content-Type": "application/vnd.oci.image.manifest.v1+json",
                            "Content-Length": "0",
                        },
                    )
                )
            elif path.endswith(ATT):
                self.att(conn)
            elif "/blobs/" in path:
                _json(conn, self.blob)
            else:
                conn.sendall(_head("404 Not Found", {"Content-Length": "0"}))

    def close(self) -> None:
        self.stop.set()
        self.srv.close()


@pytest.fixture
def registry():
    reg = Registry()
    yield reg
    reg.close()


@pytest.fixture(scope="module")
def pub(tmp_path_factory):
    d = tmp_path_factory.mktemp("key")
    key, pub = d / "k.pem", d / "pub.pem"
    subprocess.run(
        [
            "openssl",
            "genpkey",
            "-algorithm",
            "EC",
            "-pkeyopt",
            "ec_paramgen_curve:P-256",
            "-out",
            str(key),
        ],
        check=True,
        capture_output=True,
    )
    subprocess.run(
        ["openssl", "pkey", "-in", str(key), "-pubout", "-out", str(pub)],
        check=True,
        capture_output=True,
    )
    return pub


def _verify(registry, pub, tmp_path):
    return run_cli(
        "verify",
        "--image",
        f"{registry.host}/team/x:1",
        "--key",
        str(pub),
        env={**registry.env, "VALORCH_DB": str(tmp_path / "v.sqlite")},
        timeout=120,
    )


def _deep(n: int) -> bytes:
    return b"[" * n


def _endless_manifest(conn) -> None:
    """A manifest that never ends (64 MiB sent here: enough to pass any cap)."""
    _chunked(conn, (b"[" * (1 << 20) for _ in range(64)))


def _huge_manifest(conn) -> None:
    """Valid JSON, 8 MiB of it padding: over the 4 MiB cap of a manifest."""
    _chunked(conn, [b'{"layers": []' + b" " * (8 << 20) + b"}"])


def _declared_huge(conn) -> None:
    """A Content-Length of 100 MiB, then nothing: refused before a byte is read."""
    conn.sendall(
        _head(
            "200 OK",
            {"Content-Type": "application/json", "Content-Length": str(100 << 20)},
        )
    )
    time.sleep(40)


def _cut_short(conn) -> None:
    """A Content-Length of 1,000 and 14 bytes: the body ends before it says."""
    conn.sendall(_head("200 OK", {"Content-Type": "application/json", "Content-Length": "1000"}))
    conn.sendall(b'{"layers": [] ')


@pytest.mark.parametrize(
    ("answer", "said"),
    [
        (_endless_manifest, "more than the 4 MiB valorch reads"),
        (_huge_manifest, "more than the 4 MiB valorch reads"),
        (lambda conn: _json(conn, _deep(200_000)), "JSON nested deeper than 64 levels"),
        (_declared_huge, "100 MiB declared, more than the 4 MiB valorch reads"),
        (_cut_short, "body shorter than its Content-Length"),
    ],
    ids=["endless", "huge", "deep", "declared-huge", "cut-short"],
)
def test_a_manifest_past_its_bounds_is_the_registrys_fault(registry, pub, tmp_path, answer, said):
    registry.att = answer
    done = _verify(registry, pub, tmp_path)
    assert done.returncode == 3, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    assert f"registry {registry.host}" in done.stderr and said in done.stderr, done.stderr


def test_an_attestation_layer_nested_too_deep_is_refused_not_parsed(registry, pub, tmp_path):
    registry.blob = _deep(200_000)
    layer = {
        "mediaType": "application/vnd.dsse.envelope.v1+json",
        "digest": "sha256:" + hashlib.sha256(registry.blob).hexdigest(),
        "size": len(registry.blob),
    }
    registry.att = lambda conn: _json(conn, json.dumps({"layers": [layer]}).encode())
    done = _verify(registry, pub, tmp_path)
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == 1, done.stdout + done.stderr
    assert "malformed envelope (JSON nested deeper than 64 levels)" in done.stdout + done.stderr


def _trickled_headers(conn) -> None:
    conn.sendall(b"HTTP/1.1 200 OK\r\n")
    for _ in range(120):
        conn.sendall(b"X")
        time.sleep(1)


def test_images_check_timeout_is_each_requests_whole_time(registry, tmp_path):
    """A registry that sends its answer a byte a second: `--timeout 3` ends the request at
    3 s (every read came within the timeout; the whole did not)."""
    registry.head = _trickled_headers
    catalog = tmp_path / "images"
    catalog.mkdir()
    (catalog / "x.yaml").write_text(
        "family: x\nbackend: cpu\nimages:\n"
        f"  - alias: x\n    reference: {registry.host}/team/x:1\n"
        f'    digest: "{DIGEST}"\n'
    )
    done = run_cli(
        "images", "check", "--catalog", str(catalog), "--timeout", "3",
        env=registry.env, timeout=120,
    )  # fmt: skip
    assert done.returncode == 3, done.stdout + done.stderr
    assert f"registry {registry.host} did not answer" in done.stdout + done.stderr
    assert "within 3 s" in done.stdout + done.stderr
