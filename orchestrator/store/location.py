"""Where a store lives, readable without SQLAlchemy: the default file, the SQLite file a
URL names, and the migration lock beside it (``store.db``, ``full``, ``spill`` and
``checkpoint`` use the same)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sqlalchemy.engine import URL

DEFAULT_PATH = "results/valorch.sqlite"  # relative to the working directory


def sqlite_file(url: URL) -> str | None:
    """The file a SQLAlchemy URL names when it is a SQLite file; None for a server or :memory:."""
    if url.get_backend_name() != "sqlite" or not url.database or url.database == ":memory:":
        return None
    return str(url.database)


def migrate_lock(path: str | Path) -> Path:
    """The lock file a migration of the SQLite file at ``path`` holds (store.db)."""
    return Path(f"{path}.migrate-lock")
