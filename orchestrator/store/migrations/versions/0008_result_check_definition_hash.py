"""The hash of each check's effective definition, kept with its results (result.definition):
a check whose command, expected output or version changed between two runs is triaged
"definition changed", never "flaky" (spec.definition_hash).

Revision ID: 0008
Revises: 0007
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    columns = {c["name"] for c in sa.inspect(op.get_bind()).get_columns("result")}
    if "definition" in columns:  # made by create_all from newer models
        return
    # a nullable column: a plain ALTER TABLE on SQLite and PostgreSQL, no table copy
    op.add_column("result", sa.Column("definition", sa.String(16), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("result") as batch:
        batch.drop_column("definition")
