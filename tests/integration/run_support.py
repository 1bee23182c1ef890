"""What a test's own runs left: their ids in its database, their containers on the engine
(by the org.valorch.run label: the engine is shared, other containers are not counted)."""

import sqlite3
import subprocess
import time
from pathlib import Path


def rows(db, sql) -> list[tuple]:
    """The rows ``sql`` selects from a test's SQLite database; none while it has no schema yet."""
    con = sqlite3.connect(db, timeout=30)
    try:
        return con.execute(sql).fetchall()
    except sqlite3.OperationalError:  # no schema yet
        return []
    finally:
        con.close()


def wait_until(proc, ready, why: str, tries: int = 2400, every: float = 0.05) -> None:
    """Poll ``ready()`` while valorch (``proc``) runs: the moment a test acts (a signal, a full
    disk, a stopped engine). Fails with ``why`` when valorch ends first or the moment never comes."""
    for _ in range(tries):
        if ready():
            return
        assert proc.poll() is None, why
        time.sleep(every)
    raise AssertionError(f"{why} (waited {tries * every:g} s)")


def act_when(proc, ready, act, why: str, timeout: float = 300, **wait) -> str:
    """At the moment ``ready()`` comes (wait_until), ``act()`` (a signal, a full disk, a
    stopped engine), then let valorch finish: its stderr. A valorch still running when the
    test fails is killed."""
    try:
        wait_until(proc, ready, why, **wait)
        act()
        _out, err = proc.communicate(timeout=timeout)
    finally:
        if proc.poll() is None:
            proc.kill()
    return err


def run_ids_in(db) -> list[str]:
    """The run ids a test's SQLite database holds (none when it does not exist yet)."""
    if not Path(db).exists():
        return []
    return [r for (r,) in rows(db, "SELECT id FROM run")]


def containers_of(run_ids, engine: str | None = None) -> list[str]:
    """Ids of the containers (any state) labelled with one of these runs (on ``engine``, else
    the default one)."""
    host = ["-H", engine] if engine else []
    found = []
    for run_id in run_ids:
        out = subprocess.run(
            ["docker", *host, "ps", "-aq", "--filter", f"label=org.valorch.run={run_id}"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        found += out.split()
    return found
