"""A private, real Docker engine beside the test engine, for the tests that need a second
one (a remote engine over TLS, a small disk, a second node): its own socket, data root, exec
root, pid file and bridge (with --bridge=none a dockerd deletes the host's docker0, which
would take the first engine's default network away from every later test), no iptables
rules; stopped by its own pid."""

from __future__ import annotations

import os
import signal
import subprocess
import time
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


def stop_stale(base: Path) -> None:
    """Stop the engine a killed session left in ``base`` (its pid file), and wait for it."""
    pid = base / "docker.pid"
    try:
        old = int(pid.read_text())
        os.kill(old, signal.SIGTERM)
    except (FileNotFoundError, ProcessLookupError, ValueError):
        return
    for _ in range(300):
        if not Path(f"/proc/{old}").exists():
            return
        time.sleep(0.1)


def subnet(bridge: str) -> str:
    """The bridge's own address: tests on parallel workers start engines at once, and two
    that picked the same free range would route each other's containers (one per bridge name:
    tests/unit/test_private_engines_apart.py)."""
    return f"10.250.{zlib.crc32(bridge.encode()) % 250}.1/24"


def _answers(sock: Path, *args: str) -> bool:
    return (
        subprocess.run(["docker", "-H", f"unix://{sock}", *args], capture_output=True).returncode
        == 0
    )


@contextmanager
def running(base: Path, bridge: str, *options: str, images: tuple[str, ...] = ()) -> Iterator[Path]:
    """A dockerd with its state under ``base`` and its own ``bridge`` (plus ``options``), with
    ``images`` copied from the test engine; yields its unix socket, stops it at the end."""
    base.mkdir(parents=True, exist_ok=True)
    sock = base / "docker.sock"
    subprocess.run(["ip", "link", "add", bridge, "type", "bridge"], capture_output=True)
    # its own address (dockerd takes a -b bridge's address as the containers' network)
    subprocess.run(["ip", "addr", "replace", subnet(bridge), "dev", bridge], capture_output=True)
    argv = [
        "dockerd",
        "--host",
        f"unix://{sock}",
        *options,
        "--data-root",
        str(base / "data"),
        "--exec-root",
        str(base / "exec"),
        "--pidfile",
        str(base / "docker.pid"),
        f"--bridge={bridge}",
        "--iptables=false",
        "--ip-masq=false",
    ]
    with open(base / "dockerd.log", "w") as log:
        proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)
    try:
        for _ in range(120):
            if _answers(sock, "version"):
                break
            if proc.poll() is not None:
                pytest.fail(
                    f"dockerd in {base} exited: {(base / 'dockerd.log').read_text()[-2000:]}"
                )
            time.sleep(0.5)
        for image in images:
            if not _answers(sock, "image", "inspect", image):
                subprocess.run(
                    f"docker save {image} | docker -H unix://{sock} load",
                    shell=True,
                    check=True,
                    capture_output=True,
                )
        yield sock
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
        subprocess.run(["ip", "link", "delete", bridge], capture_output=True)
