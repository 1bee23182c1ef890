"""How the Docker SDK is loaded: without its SSH transport until an ssh:// engine is used.

docker-py imports ``docker.transport.sshconn`` for every client, and with it paramiko,
cryptography, PyNaCl and invoke: their import at start-up and their teardown at exit,
on every ``valorch run``. valorch reaches ssh:// engines through the
``ssh`` client (``use_ssh_client=True``), where paramiko is never called, but the adapter
class lives in that module. So the package marks the module absent before docker-py is
first imported (docker-py skips a transport it cannot import, as it does for npipe
off Windows), and ``ssh_transport()`` loads it for the first ssh:// endpoint. docker-py
itself stays, though its ``requests`` is about 0.1 s of a run: a client of our own would be a
second one beside it for pulls, gangs and remote engines (docs/benchmarks.md, "The smoke run
against its floor: the run's own timeline").
"""

from __future__ import annotations

import os
import sys

SSHCONN = "docker.transport.sshconn"


def defer_ssh_transport() -> None:
    """Before docker-py is imported: its SSH transport is skipped (unless DOCKER_HOST is ssh://)."""
    if "docker" not in sys.modules and not os.environ.get("DOCKER_HOST", "").startswith("ssh://"):
        sys.modules.setdefault(SSHCONN, None)  # type: ignore[arg-type]


def ssh_transport() -> None:
    """docker-py's SSH adapter, for an ssh:// endpoint (imported now if it was deferred)."""
    import docker.api.client as api_client

    if hasattr(api_client, "SSHHTTPAdapter"):
        return
    if sys.modules.get(SSHCONN, ...) is None:
        del sys.modules[SSHCONN]
    from docker.transport.sshconn import SSHHTTPAdapter

    # the name docker-py's APIClient looks up (its stubs do not declare it)
    api_client.SSHHTTPAdapter = SSHHTTPAdapter  # type: ignore[attr-defined]
