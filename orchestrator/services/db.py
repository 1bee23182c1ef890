"""`valorch db`: the schema of a results database."""

from __future__ import annotations

from typing import TypedDict

from ..store import db as store_db


class StoreCheck(TypedDict):
    """`valorch db check`: the database (its URL without a password) and its problems."""

    database: str
    problems: list[str]


def upgrade(db: str | None) -> tuple[str | None, str]:
    """Migrate the database to this valorch's schema; (revision before, revision after)."""
    return store_db.upgrade(db)


def status(db: str | None) -> dict[str, str | None]:
    return store_db.status(db)


def check(db: str | None) -> StoreCheck:
    """Every problem of the store (store/health.py), without changing it."""
    from ..store import health

    engine = store_db.connect(db)
    try:
        return StoreCheck(database=store_db.public_url(db), problems=health.diagnose(engine))
    finally:
        engine.dispose()
