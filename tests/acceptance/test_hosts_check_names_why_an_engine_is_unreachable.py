"""`valorch hosts check` of a host whose engine does not answer says why, whole: the reason
the connection failed ("Connection refused") is at the end of docker-py's message, and a
message cut short ends with "…", never in the middle of a word without a mark."""

from __future__ import annotations

import json
import socket

from conftest import run_cli


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # closed once the socket is: nothing listens there


def test_an_engine_that_refuses_is_named_with_the_refusal(tmp_path):
    hosts = tmp_path / "hosts.yaml"
    port = _closed_port()
    hosts.write_text(
        f"hosts:\n  - name: dead\n    endpoint: tcp://127.0.0.1:{port}\n    labels: [cpu]\n"
    )
    proc = run_cli("hosts", "check", "--hosts", str(hosts), "--json", db=tmp_path / "v.sqlite")
    assert proc.returncode == 3, proc.stdout + proc.stderr
    (problem,) = json.loads(proc.stdout)["hosts"][0]["problems"]
    assert problem.startswith(f"Docker engine at tcp://127.0.0.1:{port} does not answer ("), problem
    assert "Connection refused" in problem, problem
