"""Alembic environment: the caller (store.db.migrate) hands over an open connection."""

from __future__ import annotations

from alembic import context
from sqlalchemy import create_engine
from sqlalchemy.engine import Connection

from orchestrator.store.tables import include_object_for, metadata_for

config = context.config
connection = config.attributes.get("connection")


def _run(conn: Connection) -> None:
    # render_as_batch: SQLite cannot ALTER most things; batch mode recreates tables.
    context.configure(
        connection=conn,
        target_metadata=metadata_for(conn.dialect.name),
        render_as_batch=True,
        include_object=include_object_for(conn.dialect.name),
    )
    with context.begin_transaction():
        context.run_migrations()


if connection is not None:
    _run(connection)
else:  # plain `alembic -x` use with sqlalchemy.url set in the Config
    engine = create_engine(config.get_main_option("sqlalchemy.url") or "")
    with engine.begin() as conn:
        _run(conn)
