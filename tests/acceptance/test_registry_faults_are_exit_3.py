"""A registry that answers with a redirect loop is the registry's fault: `verify` exits 3
naming the registry and the loop, never exit 2 "check the path you passed"."""

from __future__ import annotations

import http.server
import threading

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ed25519


class _Loop(http.server.BaseHTTPRequestHandler):
    def _loop(self) -> None:
        self.send_response(302)
        self.send_header("Location", self.path)
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_GET = do_HEAD = _loop  # noqa: N815

    def log_message(self, *_args) -> None:
        pass


@pytest.fixture
def looping_registry():
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Loop)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield f"127.0.0.1:{srv.server_address[1]}"
    srv.shutdown()


def test_a_redirect_loop_is_exit_3_naming_the_registry(cli, tmp_path, looping_registry):
    key = tmp_path / "key.pub.pem"
    key.write_bytes(
        ed25519.Ed25519PrivateKey.generate()
        .public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    )
    image = f"{looping_registry}/team/x:1"
    proc = cli("verify", "--image", image, "--key", str(key))
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert f"registry {looping_registry} redirects in a loop" in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr and "check the path" not in proc.stderr
