"""Timing samples as packed float64 instead of JSON text; drop two result indexes
that cost ingest time and serve no query (run_id is the leading column of
uq_result; nothing filters results by status alone).

Revision ID: 0002
Revises: 0001
"""

from __future__ import annotations

import json

import sqlalchemy as sa
from alembic import op

from orchestrator.store.coltypes import pack_samples

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    conn = op.get_bind()
    present = {ix["name"] for ix in sa.inspect(conn).get_indexes("result")}
    for name in ("ix_result_run_id", "ix_result_status"):
        if name in present:  # absent where an older create_all made the tables from newer models
            op.drop_index(name, table_name="result")
    rows = conn.execute(sa.text("SELECT id, samples FROM result")).fetchall()
    with op.batch_alter_table("result") as batch:
        batch.alter_column(
            "samples",
            existing_type=sa.JSON(),
            type_=sa.LargeBinary(),
            existing_nullable=False,
            postgresql_using="convert_to(samples::text, 'UTF8')",
        )
    update = sa.text("UPDATE result SET samples = :blob WHERE id = :id")
    for rid, value in rows:
        try:
            values = json.loads(value) if isinstance(value, (str, bytes)) else (value or [])
        except (UnicodeDecodeError, ValueError):
            continue  # already packed (tables made by create_all from newer models)
        conn.execute(update, {"id": rid, "blob": pack_samples(values)})


def downgrade() -> None:
    from orchestrator.store.samples_codec import samples_tuple

    conn = op.get_bind()
    rows = conn.execute(sa.text("SELECT id, samples FROM result")).fetchall()
    with op.batch_alter_table("result") as batch:
        batch.alter_column(
            "samples", existing_type=sa.LargeBinary(), type_=sa.JSON(), existing_nullable=False
        )
    update = sa.text("UPDATE result SET samples = :text WHERE id = :id")
    for rid, value in rows:
        conn.execute(update, {"id": rid, "text": json.dumps(samples_tuple(value))})
    op.create_index("ix_result_status", "result", ["status"])
    op.create_index("ix_result_run_id", "result", ["run_id"])
