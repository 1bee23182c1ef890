"""The schema revisions this valorch knows, without importing SQLAlchemy or Alembic:
``store.db`` checks them when it opens a database. A constant, because asking Alembic for
its head costs every command about half a second (docs/benchmarks.md, "Why the code is
shaped for speed")."""

from __future__ import annotations

BASELINE = "0001"  # the schema that create_all made before migrations existed
# the newest migration; a unit test keeps this equal to what Alembic says
HEAD = "0011"
# oldest first; a unit test keeps this equal to Alembic's history
REVISIONS = ("0001", "0002", "0003", "0004", "0005", "0006", "0007", "0008", "0009", "0010", "0011")
