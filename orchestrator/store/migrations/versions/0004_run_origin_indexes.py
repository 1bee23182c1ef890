"""Where a pushed run came from (run.origin), when its raw samples were pruned
(run.pruned), and the run indexes that the latest
matrix of a job and the latest runs of an image use at fleet scale
(bench/bench_scale_fleet.py shows them in EXPLAIN): (job, image_id, host_id, started)
and (image_id, started). They replace ix_run_job and ix_run_image_id, their prefixes.

Revision ID: 0004
Revises: 0003
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # what is there already: tables made by create_all from newer models are stamped 0001
    inspector = sa.inspect(op.get_bind())
    columns = {c["name"] for c in inspector.get_columns("run")}
    present = {ix["name"] for ix in inspector.get_indexes("run")}
    new = [
        c
        for c in (
            sa.Column("origin", sa.String(500), nullable=True),
            sa.Column("pruned", sa.DateTime(), nullable=True),
        )
        if c.name not in columns
    ]
    if new:
        # plain ADD COLUMNs on SQLite too: batch mode does not copy a large table for them
        with op.batch_alter_table("run") as batch:
            for column in new:
                batch.add_column(column)
    for name in ("ix_run_job", "ix_run_image_id"):
        if name in present:
            op.drop_index(name, table_name="run")
    if "ix_run_image_started" not in present:
        op.create_index("ix_run_image_started", "run", ["image_id", "started"])
    if "ix_run_job_latest" not in present:
        op.create_index("ix_run_job_latest", "run", ["job", "image_id", "host_id", "started"])


def downgrade() -> None:
    op.drop_index("ix_run_job_latest", table_name="run")
    op.drop_index("ix_run_image_started", table_name="run")
    op.create_index("ix_run_image_id", "run", ["image_id"])
    op.create_index("ix_run_job", "run", ["job"])
    with op.batch_alter_table("run") as batch:
        batch.drop_column("pruned")
        batch.drop_column("origin")
