"""A probe container's progress seen from outside, for the fault tests that strike mid-task:
the result records its probe has written so far (the marked lines in ``docker logs``)."""

from __future__ import annotations

import subprocess
import time

import pytest


def results_written(container: str, engine: str | None = None) -> int:
    """How many check results ``container`` (an id, or ``label=K=V`` for the one container
    that label finds; on ``engine``, else the default one) has written so far; 0 while no
    container answers."""
    host = ["-H", engine] if engine else []
    if container.startswith("label="):
        found = subprocess.run(
            ["docker", *host, "ps", "-q", "--filter", container], capture_output=True, text=True
        ).stdout.split()
        if not found:
            return 0
        container = found[0]
    log = subprocess.run(
        ["docker", *host, "logs", container], capture_output=True, text=True
    ).stdout
    return sum('"type": "result"' in line for line in log.splitlines())


def wait_for_a_result(container: str, proc: subprocess.Popen, engine: str | None = None) -> None:
    """Until ``container`` (as ``results_written`` takes it) has written its first result,
    while the valorch ``proc`` still runs (its stderr is the failure's message otherwise)."""
    for _ in range(1200):
        if results_written(container, engine) >= 1:
            return
        assert proc.poll() is None, proc.communicate()[1][-3000:]
        time.sleep(0.1)
    pytest.fail(f"container {container} wrote no result")
