"""A damaged SQLite file: exit 3 naming the file and how to recover, never a traceback.

SQLite says "database disk image is malformed" (SQLITE_CORRUPT) when a page is garbage,
"file is not a database" (SQLITE_NOTADB) when the header is. Either can surface at any
statement, long after the file opened (a corrupted table page is read only when a query
reaches it); ``install`` turns them, wherever SQLAlchemy meets them, into one error.
"""

from __future__ import annotations

from sqlalchemy import event
from sqlalchemy.engine import Engine

from ..errors import InfrastructureError

SQLITE_CORRUPT, SQLITE_NOTADB = 11, 26


def is_damaged(exc: BaseException) -> bool:
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None and code & 0xFF in (SQLITE_CORRUPT, SQLITE_NOTADB):
        return True
    text = str(exc).lower()
    return "disk image is malformed" in text or "file is not a database" in text


def damaged(path: str, exc: BaseException) -> InfrastructureError:
    return InfrastructureError(
        f"the results database {path} is damaged ({str(exc).splitlines()[0]}); nothing was written to it",
        f"restore it from a backup, or recover what is readable: sqlite3 {path} .recover | sqlite3 recovered.sqlite "
        "(then pass --db recovered.sqlite); to start afresh pass --db with a new file")


def install(engine: Engine) -> None:
    """Raise ``damaged`` instead of the driver's error for a corrupted SQLite file."""
    path = engine.url.database or ":memory:"

    @event.listens_for(engine, "handle_error")
    def _damaged(ctx) -> None:  # noqa: ANN001
        if ctx.original_exception is not None and is_damaged(ctx.original_exception):
            raise damaged(path, ctx.original_exception) from None
