"""Revoked acceptances: ``valorch accept revoke`` records who withdrew an acceptance, when and
why; the row stays (``accept list`` shows it revoked) and excuses nothing from then on.

Revision ID: 0010
Revises: 0009
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None

COLUMNS = (
    ("revoked", sa.DateTime),
    ("revoked_by", lambda: sa.String(200)),
    ("revoked_reason", sa.Text),
)


def upgrade() -> None:
    have = {c["name"] for c in sa.inspect(op.get_bind()).get_columns("acceptance")}
    # nullable columns: a plain ALTER TABLE on SQLite and PostgreSQL, no table copy
    for name, kind in COLUMNS:
        if name not in have:  # made by create_all from newer models
            op.add_column("acceptance", sa.Column(name, kind(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("acceptance") as batch:
        for name, _kind in reversed(COLUMNS):
            batch.drop_column(name)
