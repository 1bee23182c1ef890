"""A results database whose disk is full: exit 3 naming the database and the free space.

SQLite says "database or disk is full" (SQLITE_FULL), PostgreSQL SQLSTATE 53100
(disk_full). ``damaged.install`` turns either, wherever SQLAlchemy meets it (a statement, a
commit, a migration), into ``StorageFull``; the dispatcher then spills the results
it was storing (``store/spill.py``) for ``--resume`` to import.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from sqlalchemy.engine import URL

from ..errors import InfrastructureError
from .location import sqlite_file

SQLITE_FULL = 13  # sqlite3 error code
PG_DISK_FULL = "53100"


class StorageFull(InfrastructureError):  # noqa: N818  # the name scheduling catches
    """The results database cannot grow: its disk (or quota) is full."""

    spill: Path | None = None  # where the results being stored went instead


def is_full(exc: BaseException) -> bool:
    code = getattr(exc, "sqlite_errorcode", None)
    if code == SQLITE_FULL or getattr(exc, "sqlstate", None) == PG_DISK_FULL:
        return True
    text = str(exc).lower()
    return "database or disk is full" in text or "no space left on device" in text


SQLITE_IOERR = 10
#: below this many bytes free (to this user), a SQLite I/O error is the disk being full:
#: SQLite reports a full disk met while creating its -wal/-shm files as "disk I/O error"
FULL_BELOW = 256 << 10


def _usage(url: URL) -> tuple[int, int] | None:
    """The bytes free (to this user) and in all where a SQLite file lives; None for a server."""
    path = sqlite_file(url)
    if path is None:
        return None
    try:
        usage = shutil.disk_usage(Path(path).resolve().parent)
    except OSError:
        return None
    return usage.free, usage.total


def _io_error(exc: BaseException) -> bool:
    code = getattr(exc, "sqlite_errorcode", None)
    return (code is not None and code & 0xFF == SQLITE_IOERR) or "disk i/o error" in str(
        exc
    ).lower()


def free_space(url: URL) -> str:
    """The free space where a SQLite file lives, in words ("" for a server)."""
    usage = _usage(url)
    if usage is None:
        return ""
    return "{:.1f} MiB free of {:.1f} MiB".format(*(n / (1 << 20) for n in usage))


def storage_full(url: URL) -> StorageFull:
    name = (
        url.database
        if url.get_backend_name() == "sqlite"
        else url.render_as_string(hide_password=True)
    )
    space = free_space(url)
    return StorageFull(
        f"the disk of the results database {name} is full" + (f" ({space})" if space else ""),
        "free space there or move it to a larger disk; results measured but not stored are "
        "spilled, and `valorch run --resume BATCH` imports them",
    )


def named(exc: BaseException, url: URL) -> StorageFull | None:
    """``StorageFull`` when the driver's error ``exc`` is the database's disk being full
    (said so, or a SQLite I/O error on a disk with no room left), else None."""
    usage = _usage(url) if _io_error(exc) else None
    if is_full(exc) or (usage is not None and usage[0] < FULL_BELOW):
        return storage_full(url)
    return None
