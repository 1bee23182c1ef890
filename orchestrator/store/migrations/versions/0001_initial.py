"""The initial schema, exactly as create_all made it before migrations existed.

Revision ID: 0001
Revises:
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    _runs()
    _results()
    _published()


def _runs() -> None:
    """What ran where: image, host, run, task."""
    op.create_table(
        "image",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("alias", sa.String(200), nullable=False),
        sa.Column("reference", sa.String(500), nullable=False),
        sa.Column("digest", sa.String(200), nullable=True),
        sa.Column("backend", sa.String(20), nullable=False),
        sa.Column("family", sa.String(50), nullable=False),
        sa.Column("components", sa.JSON(), nullable=False),
        sa.UniqueConstraint("reference", "digest", "alias", name="uq_image"),
    )
    op.create_index("ix_image_alias", "image", ["alias"])
    op.create_table(
        "host",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("fingerprint", sa.String(64), nullable=False, unique=True),
        sa.Column("spec", sa.JSON(), nullable=False),
    )
    op.create_index("ix_host_name", "host", ["name"])
    op.create_table(
        "run",
        sa.Column("id", sa.String(36), primary_key=True),
        sa.Column("batch", sa.String(36), nullable=False),
        sa.Column("job", sa.String(200), nullable=False),
        sa.Column("image_id", sa.Integer(), sa.ForeignKey("image.id"), nullable=False),
        sa.Column("host_id", sa.Integer(), sa.ForeignKey("host.id"), nullable=False),
        sa.Column("executor", sa.String(20), nullable=False),
        sa.Column("valorch_version", sa.String(40), nullable=False),
        sa.Column("spec_hash", sa.String(64), nullable=False),
        sa.Column("cpu_only", sa.Boolean(), nullable=False),
        sa.Column("started", sa.DateTime(), nullable=False),
        sa.Column("ended", sa.DateTime(), nullable=True),
        sa.Column("state", sa.String(20), nullable=False),
        sa.Column("meta", sa.JSON(), nullable=False),
    )
    for col in ("batch", "job", "image_id", "started"):
        op.create_index(f"ix_run_{col}", "run", [col])
    op.create_table(
        "task",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("run_id", sa.String(36), sa.ForeignKey("run.id"), nullable=False),
        sa.Column("suite", sa.String(100), nullable=False),
        sa.Column("suite_spec", sa.JSON(), nullable=False),
        sa.Column("state", sa.String(20), nullable=False),
        sa.Column("tries", sa.Integer(), nullable=False),
        sa.Column("started", sa.DateTime(), nullable=True),
        sa.Column("ended", sa.DateTime(), nullable=True),
        sa.Column("timings", sa.JSON(), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.UniqueConstraint("run_id", "suite", name="uq_task"),
    )
    op.create_index("ix_task_run_id", "task", ["run_id"])


def _results() -> None:
    """What a run found: check, result, inventory."""
    op.create_table(
        "check",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("check_id", sa.String(200), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("feature", sa.String(300), nullable=False),
        sa.Column("kind", sa.String(20), nullable=False),
        sa.Column("library", sa.String(200), nullable=True),
        sa.Column("unit", sa.String(40), nullable=True),
        sa.Column("bigger_is_better", sa.Boolean(), nullable=False),
        sa.UniqueConstraint("check_id", "version", name="uq_check"),
    )
    op.create_table(
        "result",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("run_id", sa.String(36), sa.ForeignKey("run.id"), nullable=False),
        sa.Column("task_id", sa.Integer(), sa.ForeignKey("task.id"), nullable=True),
        sa.Column("check_pk", sa.Integer(), sa.ForeignKey("check.id"), nullable=False),
        sa.Column("attempt", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("duration_s", sa.Float(), nullable=False),
        sa.Column("message", sa.Text(), nullable=False),
        sa.Column("log", sa.Text(), nullable=False),
        sa.Column("metrics", sa.JSON(), nullable=False),
        sa.Column("samples", sa.JSON(), nullable=False),
        sa.UniqueConstraint("run_id", "check_pk", "attempt", name="uq_result"),
    )
    for col in ("run_id", "check_pk", "status"):
        op.create_index(f"ix_result_{col}", "result", [col])
    op.create_table(
        "inventory",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("run_id", sa.String(36), sa.ForeignKey("run.id"), nullable=False),
        sa.Column("component", sa.String(200), nullable=False),
        sa.Column("value", sa.Text(), nullable=False),
        sa.Column("source", sa.String(40), nullable=False),
        sa.Column("evidence", sa.Text(), nullable=False),
        sa.Column("extra", sa.JSON(), nullable=False),
        sa.UniqueConstraint("run_id", "component", name="uq_inventory"),
    )
    op.create_index("ix_inventory_run_id", "inventory", ["run_id"])


def _published() -> None:
    """What was published or named: matrix_version, matrix_cell, known_issue, baseline."""
    op.create_table(
        "matrix_version",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("version", sa.String(50), nullable=False, unique=True),
        sa.Column("published", sa.DateTime(), nullable=False),
        sa.Column("last_verified", sa.DateTime(), nullable=False),
        sa.Column("source", sa.Text(), nullable=False),
        sa.Column("meta", sa.JSON(), nullable=False),
    )
    op.create_table(
        "matrix_cell",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("matrix_id", sa.Integer(), sa.ForeignKey("matrix_version.id"), nullable=False),
        sa.Column("row", sa.String(300), nullable=False),
        sa.Column("column", sa.String(300), nullable=False),
        sa.Column("verdict", sa.String(20), nullable=False),
        sa.Column("statuses", sa.JSON(), nullable=False),
        sa.Column("runs", sa.JSON(), nullable=False),
        sa.Column("meta", sa.JSON(), nullable=False),
        sa.UniqueConstraint("matrix_id", "row", "column", name="uq_matrix_cell"),
    )
    op.create_index("ix_matrix_cell_matrix_id", "matrix_cell", ["matrix_id"])
    op.create_table(
        "known_issue",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("pattern", sa.String(300), nullable=False),
        sa.Column("selector", sa.String(300), nullable=False),
        sa.Column("expected_status", sa.String(20), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("url", sa.Text(), nullable=False),
        sa.Column("expires", sa.DateTime(), nullable=True),
    )
    op.create_table(
        "baseline",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("name", sa.String(100), nullable=False, unique=True),
        sa.Column("run_id", sa.String(36), sa.ForeignKey("run.id"), nullable=True),
        sa.Column("matrix_version", sa.String(50), nullable=True),
        sa.Column("created", sa.DateTime(), nullable=False),
    )


def downgrade() -> None:
    for table in (
        "baseline",
        "known_issue",
        "matrix_cell",
        "matrix_version",
        "inventory",
        "result",
        "check",
        "task",
        "run",
        "host",
        "image",
    ):
        op.drop_table(table)
