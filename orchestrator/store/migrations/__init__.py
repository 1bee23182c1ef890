"""Alembic migrations of the results store, run by store.db.open_engine (no alembic.ini:
the configuration is built in code)."""
