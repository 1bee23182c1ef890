"""A registry's faults below HTTP are registry faults (InfrastructureError, exit 3, naming
the registry and what went wrong), and every request has a total deadline. Against a real
misbehaving HTTP server on the loopback (plain HTTP, as an insecure local registry)."""

from __future__ import annotations

import contextlib
import socket
import threading
import time

import pytest

from orchestrator.errors import InfrastructureError
from orchestrator.imageref import parse
from orchestrator.registry import RegistryClient


def _serve(answer):
    """A one-thread server: each connection's request is read, then ``answer(conn, path)``."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)
    stop = threading.Event()

    def loop():
        srv.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = srv.accept()
            except OSError:
                continue
            with conn:
                data = b""
                while b"\r\n\r\n" not in data:
                    chunk = conn.recv(4096)
                    if not chunk:
                        break
                    data += chunk
                if data.startswith(b"\x16"):  # a TLS hello: this registry speaks plain HTTP
                    continue
                path = data.split(b" ", 2)[1].decode() if data.count(b" ") >= 2 else "/"
                with contextlib.suppress(OSError):  # the client hung up: its own business
                    answer(conn, path)

    threading.Thread(target=loop, daemon=True).start()
    yield f"127.0.0.1:{srv.getsockname()[1]}"
    stop.set()
    srv.close()


def _head(status: str, headers: dict[str, str], body: bytes = b"") -> bytes:
    headers = {"Connection": "close", **headers}  # one request per connection
    lines = [f"HTTP/1.1 {status}", *(f"{k}: {v}" for k, v in headers.items())]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def bad_realm(conn, _path):
    conn.sendall(
        _head(
            "401 Unauthorized",
            {"WWW-Authenticate": 'Bearer realm="::not a url::"', "Content-Length": "0"},
        )
    )


def redirect_loop(conn, path):
    conn.sendall(_head("302 Found", {"Location": path, "Content-Length": "0"}))


def broken_chunks(conn, _path):
    conn.sendall(
        _head("200 OK", {"Transfer-Encoding": "chunked", "Content-Type": "application/json"})
        + b"zz\r\nnot a chunk\r\n"
    )


def trickle(conn, _path):
    conn.sendall(
        _head("200 OK", {"Content-Length": "100000", "Docker-Content-Digest": "sha256:" + "0" * 64})
    )
    for _ in range(100000):
        conn.sendall(b" ")
        time.sleep(0.5)


@pytest.mark.parametrize(
    ("answer", "why"),
    [
        (bad_realm, "sent a URL"),
        (redirect_loop, "redirects in a loop"),
        (broken_chunks, "broken chunked response"),
    ],
)
def test_a_transport_fault_is_a_registry_fault_naming_it(answer, why):
    domain = next(_serve(answer))
    client = RegistryClient(timeout=5)
    with pytest.raises(InfrastructureError) as err:
        client.manifest(parse(f"{domain}/team/x:1"))
    assert err.value.exit_code == 3
    assert f"registry {domain}" in err.value.message and why in err.value.message


def test_a_registry_that_trickles_meets_the_total_deadline():
    domain = next(_serve(trickle))
    client = RegistryClient(timeout=2, deadline=3)  # each byte is well within the read timeout
    with pytest.raises(InfrastructureError) as err:
        client.manifest(parse(f"{domain}/team/x:1"))
    assert f"registry {domain} did not answer" in err.value.message
    assert "within 3 s" in err.value.message


def test_a_command_past_its_registry_budget_sends_no_more_requests():
    """Every request of one command (one client) together has a budget: past it a request
    is not sent, exit 3 naming the registry."""
    client = RegistryClient(timeout=2, budget=0.0)
    with pytest.raises(InfrastructureError) as err:
        client.manifest(parse("127.0.0.1:9/team/x:1"))
    assert err.value.exit_code == 3
    assert "registry 127.0.0.1:9: this command's registry requests took more than 0 s" in (
        err.value.message
    )
