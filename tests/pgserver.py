"""A throwaway PostgreSQL server for the tests and the benchmarks.

Debian's ``postgresql`` package (``.ci/run`` installs it) provides initdb and
postgres under /usr/lib/postgresql/<version>/bin. PostgreSQL refuses to run as
root, so as root the cluster belongs to ``nobody``: its data directory is created
under /tmp (not pytest's 0700 base directory, which nobody could not traverse) and
chowned to it. The server listens on 127.0.0.1 on a free port and on a private
unix socket directory; authentication is ``trust`` for the superuser ``valorch``.
"""

from __future__ import annotations

import glob
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

NOBODY = 65534


class UnavailableError(RuntimeError):
    """What the tests need is not installed here; the message says what and how to get it."""


def missing() -> str | None:
    """Why no server can be started here (the server or the driver is not installed), or None."""
    try:
        import psycopg  # noqa: F401 (imported only to learn whether the driver is there)
    except ImportError:
        return "psycopg is not installed: pip install -e '.[postgres]'"
    if bindir() is None:
        return "no PostgreSQL server: install Debian's postgresql package (.ci/run does)"
    return None


def bindir() -> Path | None:
    """The newest installed server's bin directory, or None."""
    found = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/postgres"),
        key=lambda p: int(Path(p).parts[-3]) if Path(p).parts[-3].isdigit() else 0,
    )
    return Path(found[-1]).parent if found else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Server:
    base: Path
    port: int
    proc: subprocess.Popen
    user: str = "valorch"

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://{self.user}@127.0.0.1:{self.port}/{database}"

    def _admin(self, sql: str) -> None:
        import psycopg

        with psycopg.connect(
            f"host=127.0.0.1 port={self.port} user={self.user} dbname=postgres", autocommit=True
        ) as conn:
            conn.execute(sql)

    def create_database(self, name: str | None = None) -> str:
        """A fresh, empty database; returns its URL."""
        name = name or f"t_{uuid.uuid4().hex[:12]}"
        self._admin(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def drop_database(self, name: str) -> None:
        self._admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(
                signal.SIGINT
            )  # fast shutdown (its own pid): test clients may stay connected
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        shutil.rmtree(self.base, ignore_errors=True)


def start(
    *, fsync: bool = False, settings: dict[str, str] | None = None, base: Path | None = None
) -> Server:
    """initdb + postgres in a new directory; the caller stops it (Server.stop).
    Raises UnavailableError, before starting anything, when the server or the driver is missing."""
    reason = missing()
    if reason is not None:
        raise UnavailableError(reason)
    import psycopg

    bins = bindir()
    assert bins is not None
    base = Path(tempfile.mkdtemp(prefix="valorch-pg-", dir=str(base) if base else None))
    data, sock = base / "data", base / "sock"
    sock.mkdir()
    as_root = os.geteuid() == 0
    ids = {"user": NOBODY, "group": NOBODY} if as_root else {}
    if as_root:
        for p in (base, sock):
            os.chown(p, NOBODY, NOBODY)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C", "HOME": str(base)}
    init = subprocess.run(
        [
            str(bins / "initdb"),
            "-D",
            str(data),
            "-U",
            "valorch",
            "--auth=trust",
            "-E",
            "UTF8",
            "--no-locale",
            "--no-sync",
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=base,
        **ids,
    )
    if init.returncode != 0:
        shutil.rmtree(base, ignore_errors=True)
        raise RuntimeError(f"initdb failed: {init.stderr or init.stdout}")
    port = _free_port()
    opts = {
        "listen_addresses": "127.0.0.1",
        "port": str(port),
        "unix_socket_directories": str(sock),
        "fsync": "on" if fsync else "off",
        "synchronous_commit": "on" if fsync else "off",
        "full_page_writes": "on" if fsync else "off",
        "max_connections": "200",
        "shared_buffers": "256MB",
        **(settings or {}),
    }
    argv = [str(bins / "postgres"), "-D", str(data)]
    for k, v in opts.items():
        argv += ["-c", f"{k}={v}"]
    with open(base / "server.log", "ab") as log:
        proc = subprocess.Popen(
            argv, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=base, **ids
        )
    server = Server(base, port, proc)
    deadline = time.monotonic() + 60
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                pass
            server._admin("SELECT 1")
            return server
        except (OSError, psycopg.OperationalError):  # still starting: refused, or not ready
            if proc.poll() is not None or time.monotonic() > deadline:
                text = (base / "server.log").read_text(errors="replace")
                server.stop()
                raise RuntimeError(f"PostgreSQL did not start:\n{text}") from None
            time.sleep(0.2)
