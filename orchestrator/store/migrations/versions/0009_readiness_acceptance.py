"""Accepted regressions: ``valorch accept add`` records that a red readiness cell ships
knowingly (who, why, until when, the pass rate now expected).

Revision ID: 0009
Revises: 0008
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    if "acceptance" in sa.inspect(op.get_bind()).get_table_names():  # made by create_all
        return
    op.create_table(
        "acceptance",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("check_id", sa.String(200), nullable=False),
        sa.Column("env", sa.String(300), nullable=False),
        sa.Column("reason", sa.Text, nullable=False),
        sa.Column("by", sa.String(200), nullable=False),
        sa.Column("until", sa.DateTime, nullable=False),
        sa.Column("expected_rate", sa.Float, nullable=True),
        sa.Column("created", sa.DateTime, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("acceptance")
