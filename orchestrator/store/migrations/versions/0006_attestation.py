"""Signed attestations beside the runs they came from (docs/attestations.md): one DSSE envelope per
image digest and predicate type, with where it was pushed.

Revision ID: 0006
Revises: 0005
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    if (
        "attestation" in sa.inspect(op.get_bind()).get_table_names()
    ):  # made by create_all from newer models
        return
    op.create_table(
        "attestation",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("run_id", sa.String(36), sa.ForeignKey("run.id"), nullable=True),
        sa.Column("source", sa.String(300), nullable=False),
        sa.Column("subject", sa.String(500), nullable=False),
        sa.Column("digest", sa.String(200), nullable=False),
        sa.Column("predicate_type", sa.String(200), nullable=False),
        sa.Column("envelope", sa.Text, nullable=False),
        sa.Column("keyid", sa.String(200), nullable=False),
        sa.Column("created", sa.DateTime, nullable=False),
        sa.Column("pushed", sa.String(500), nullable=True),
    )
    op.create_index("ix_attestation_run_id", "attestation", ["run_id"])
    op.create_index("ix_attestation_digest", "attestation", ["digest"])


def downgrade() -> None:
    op.drop_index("ix_attestation_digest", table_name="attestation")
    op.drop_index("ix_attestation_run_id", table_name="attestation")
    op.drop_table("attestation")
