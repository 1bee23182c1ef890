"""What a test's own runs left: their ids in its database, their containers on the engine
(by the org.valorch.run label: the engine is shared, other containers are not counted)."""

import sqlite3
import subprocess
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


def run_ids_in(db) -> list[str]:
    """The run ids a test's SQLite database holds (none when it does not exist yet)."""
    if not Path(db).exists():
        return []
    return [r for (r,) in rows(db, "SELECT id FROM run")]


def containers_of(run_ids) -> list[str]:
    """Ids of the containers (any state) labelled with one of these runs."""
    found = []
    for run_id in run_ids:
        out = subprocess.run(["docker", "ps", "-aq", "--filter", f"label=org.valorch.run={run_id}"],
                             capture_output=True, text=True, check=True).stdout
        found += out.split()
    return found


