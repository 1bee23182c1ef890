"""Why each red check is red: the triage class of every failing check of a
run with its evidence, keyed by the result row of the check's last attempt.

Revision ID: 0007
Revises: 0006
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    if (
        "triage" in sa.inspect(op.get_bind()).get_table_names()
    ):  # made by create_all from newer models
        return
    op.create_table(
        "triage",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("run_id", sa.String(36), sa.ForeignKey("run.id"), nullable=False),
        sa.Column("result_id", sa.Integer, sa.ForeignKey("result.id"), nullable=True),
        sa.Column("task_id", sa.Integer, sa.ForeignKey("task.id"), nullable=True),
        sa.Column("subject", sa.String(200), nullable=False),
        sa.Column("cls", sa.String(20), nullable=False),
        sa.Column("reason", sa.Text, nullable=False),
        sa.Column("evidence", sa.JSON, nullable=False),
        sa.Column("computed", sa.DateTime, nullable=False),
        sa.UniqueConstraint("result_id"),
    )
    op.create_index("ix_triage_run_id", "triage", ["run_id"])


def downgrade() -> None:
    op.drop_index("ix_triage_run_id", table_name="triage")
    op.drop_table("triage")
