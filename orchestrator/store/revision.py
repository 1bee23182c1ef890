"""The schema revisions this valorch knows, without importing SQLAlchemy or Alembic:
``store.db`` checks them when it opens a database, and ``store.lite`` (the read-only
fast path of ``valorch results list``) reads a file only when it is at HEAD."""

from __future__ import annotations

BASELINE = "0001"  # the schema that create_all made before migrations existed
# The newest migration. Every command opens the database, and asking Alembic for its
# head costs half a second of imports and file parsing; a unit test keeps this equal
# to what Alembic says.
HEAD = "0007"
REVISIONS = ("0001", "0002", "0003", "0004", "0005", "0006", "0007")  # oldest first; a unit test keeps this equal to Alembic's history
