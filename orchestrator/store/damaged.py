"""A damaged store: exit 3 with "damaged store: …" naming the file, table, column or value
and how to recover, never a traceback, and never half a run (``run`` checks the store's
structure when it opens it, before anything executes).

Below the page level, the damage is a dropped table or column (``structural``, met
by any statement that names it, and ``schema_problems`` when a store is opened) or a
stored value that does not parse as its column's type (``damaged_value``, raised by
coltypes.Checked as the value is read). ``valorch db check`` (services/db.py) reports all
of them at once.

SQLite says "database disk image is malformed" (SQLITE_CORRUPT) when a page is garbage,
"file is not a database" (SQLITE_NOTADB) when the header is. Either can surface at any
statement, long after the file opened (a corrupted table page is read only when a query
reaches it); ``install`` turns them, wherever SQLAlchemy meets them, into one error.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING

from ..errors import InfrastructureError

if TYPE_CHECKING:
    from sqlalchemy import MetaData
    from sqlalchemy.engine import URL, Connection, Engine, ExceptionContext

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
        "(then pass --db recovered.sqlite); to start afresh pass --db with a new file",
    )


def named(exc: BaseException, url: URL) -> InfrastructureError | None:
    """What the driver's error ``exc`` is, if valorch names it: a full disk (full.named,
    first), a corrupted SQLite file, or a statement that met a dropped table or column."""
    from . import full

    if found := full.named(exc, url):
        return found
    if url.get_backend_name() == "sqlite" and is_damaged(exc):
        return damaged(url.database or ":memory:", exc)
    return structural(str(exc))


def install(engine: Engine) -> None:
    """Raise ``full.StorageFull`` for a full disk, else ``damaged`` for a corrupted SQLite
    file (or ``structural``'s error), instead of the driver's error."""
    from sqlalchemy import event

    @event.listens_for(engine, "handle_error")
    def _named(ctx: ExceptionContext) -> None:
        exc = ctx.original_exception
        found = None if exc is None else named(exc, engine.url)
        if found is not None:
            raise found from None


@contextmanager
def driver_errors(conn: Connection) -> Iterator[None]:
    """Around the driver's own cursor (used where SQLAlchemy's per-row work is the cost: the
    site's read of every result, the bulk ingest), whose errors SQLAlchemy's ``handle_error``
    hooks never see: a damaged file, a full disk and a dropped table become the same errors
    those hooks raise, and any other driver error SQLAlchemy's own wrapping of it (exit 3,
    "the results database failed"), never the driver's traceback."""
    from sqlalchemy.exc import DBAPIError

    dbapi = conn.dialect.dbapi
    try:
        yield
    except dbapi.Error as exc:  # type: ignore[union-attr]
        found = named(exc, conn.engine.url)  # as the engine's hook (install) names them
        if found is not None:
            raise found from None
        raise DBAPIError.instance(None, None, exc, dbapi.Error) from None  # type: ignore[union-attr]


HINT = (
    "valorch db check --db URL lists every problem of the store; restore the file from a backup, "
    "or recover what is readable: sqlite3 FILE .recover | sqlite3 recovered.sqlite"
)


def damaged_value(
    where: str, value: object, exc: BaseException, kind: str = "a valid value"
) -> InfrastructureError:
    """A stored value that does not parse as its column's type."""
    return InfrastructureError(
        f"damaged store: {where} holds {repr(value)[:80]}, which is not {kind}: "
        f"{type(exc).__name__}: {str(exc)[:120]}",
        HINT,
    )


_MISSING = re.compile(
    r'no such table: (?:main\.)?"?([\w.]+)|no such column: "?([\w.]+)'
    r'|relation "([\w.]+)" does not exist|column "?([\w.]+)"? does not exist'
)


def structural(text: str) -> InfrastructureError | None:
    """The error of a statement that met a dropped table or column, else None."""
    m = _MISSING.search(text)
    if m is None:
        return None
    table = m.group(1) or m.group(3)
    what = (
        f"table '{table}' is missing"
        if table
        else f"column '{m.group(2) or m.group(4)}' is missing"
    )
    return InfrastructureError(f"damaged store: {what}; nothing was written", HINT)


#: the tables of store/tables.py in the order the structural check names what they lack
CHECKED = (
    "check",
    "host",
    "image",
    "matrix_version",
    "matrix_cell",
    "run",
    "baseline",
    "inventory",
    "task",
    "result",
    "attestation",
    "triage",
    "acceptance",
    "store_change",
)


def schema_problems(found: Mapping[str, set[str]], metadata: MetaData) -> list[str]:
    """What the tables and columns found lack against this valorch's schema (store/tables.py's
    ``metadata``, handed in: tables.py's column types raise this module's errors)."""
    out = []
    for table in CHECKED:
        if table not in found:
            out.append(f"table '{table}' is missing")
            continue
        columns = metadata.tables[table].columns
        out += [
            f"column '{table}.{c.name}' is missing" for c in columns if c.name not in found[table]
        ]
    return out


def check_structure(found: Mapping[str, set[str]], metadata: MetaData) -> None:
    problems = schema_problems(found, metadata)
    if problems:
        raise InfrastructureError(
            f"damaged store: {'; '.join(problems[:5])}"
            + (f" (and {len(problems) - 5} more)" if len(problems) > 5 else "")
            + "; nothing was written",
            HINT,
        )
