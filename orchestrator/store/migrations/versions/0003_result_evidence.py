"""Each result records the device it ran on and the library the evidence names; the
known_issue table, which nothing ever used (known issues are YAML files given to
diff/qualify), goes.

Revision ID: 0003
Revises: 0002
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    conn = op.get_bind()
    cols = {c["name"] for c in sa.inspect(conn).get_columns("result")}
    with op.batch_alter_table("result") as batch:
        if "device" not in cols:
            batch.add_column(sa.Column("device", sa.String(200), nullable=True))
        if "library" not in cols:
            batch.add_column(sa.Column("library", sa.String(200), nullable=True))
    if "known_issue" in sa.inspect(conn).get_table_names():
        op.drop_table("known_issue")


def downgrade() -> None:
    op.create_table(
        "known_issue",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("pattern", sa.String(300), nullable=False),
        sa.Column("selector", sa.String(300), nullable=False),
        sa.Column("expected_status", sa.String(20), nullable=False),
        sa.Column("reason", sa.Text, nullable=False),
        sa.Column("url", sa.Text, nullable=False),
        sa.Column("expires", sa.DateTime, nullable=True),
    )
    with op.batch_alter_table("result") as batch:
        batch.drop_column("library")
        batch.drop_column("device")
