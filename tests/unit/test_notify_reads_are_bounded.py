"""A webhook's answer is bounded: valorch reads at most 64 KiB of it (only its status is
used) and a whole POST has a deadline, against a real misbehaving HTTP server on 127.0.0.1."""

from __future__ import annotations

import contextlib
import socket
import threading
import time

import pytest

from orchestrator.errors import InfrastructureError
from orchestrator.ext.notify import send
from orchestrator.ext.notify.targets import Target


def _server(answer):
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(4)
    sent = []

    def loop():
        conn, _ = srv.accept()
        with conn, contextlib.suppress(OSError):
            data = b""
            while b"\r\n\r\n" not in data:
                data += conn.recv(65536)
            sent.append(0)
            answer(conn, sent)

    threading.Thread(target=loop, daemon=True).start()
    return f"http://127.0.0.1:{srv.getsockname()[1]}/hook", sent, srv


def _endless(conn, sent):
    conn.sendall(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
    piece = b"x" * 65536
    for _ in range(512):  # 32 MiB, unless the client hangs up first
        conn.sendall(b"10000\r\n" + piece + b"\r\n")
        sent[0] += len(piece)
    conn.sendall(b"0\r\n\r\n")


def _trickle(conn, sent):
    conn.sendall(b"HTTP/1.1 200 OK\r\n")
    for _ in range(60):
        conn.sendall(b"X")
        time.sleep(1)


def _target(url):
    return Target("slack", url)


def test_an_endless_answer_is_read_only_up_to_its_cap():
    url, sent, srv = _server(_endless)
    with srv:
        assert send._post(_target(url), {"text": "x"}, tries=1) == 200
        time.sleep(0.5)
    assert sent[0] < 8 << 20, f"the client read {sent[0]} bytes of a 32 MiB answer"


def test_a_webhook_that_trickles_meets_the_deadline(monkeypatch):
    monkeypatch.setattr(send, "DEADLINE_S", 2.0, raising=False)
    url, _, srv = _server(_trickle)
    with srv, pytest.raises(InfrastructureError) as err:
        send._post(_target(url), {"text": "x"}, tries=1)
    assert "no answer within 2 s" in err.value.message
