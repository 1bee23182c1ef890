"""A covering index for a check's history on PostgreSQL: (check_pk) INCLUDE (run_id,
attempt, status, samples, metrics). A check's results sit one per run, each on its own
heap page; reading 50,000 of them right after a bulk load (or with the table out of
shared buffers) is more than twice as slow as warm (docs/benchmarks.md). With the
index the history is an index-only scan over a few MB that lie together. SQLite reads
the same query through ix_result_check_pk and the file's memory map, and gets nothing.

Revision ID: 0005
Revises: 0004
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None

NAME = "ix_result_history"
INCLUDE = ["run_id", "attempt", "status", "samples", "metrics"]


def upgrade() -> None:
    bind = op.get_bind()
    if bind.dialect.name != "postgresql":
        return
    if NAME not in {ix["name"] for ix in sa.inspect(bind).get_indexes("result")}:
        op.create_index(NAME, "result", ["check_pk"], postgresql_include=INCLUDE)


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.drop_index(NAME, table_name="result")
