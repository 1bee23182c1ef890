"""`valorch db`: the schema of a results database."""

from __future__ import annotations

from ..store import db as store_db


def upgrade(db: str | None) -> tuple[str | None, str]:
    """Migrate the database to this valorch's schema; (revision before, revision after)."""
    return store_db.upgrade(db)


def status(db: str | None) -> dict[str, str | None]:
    return store_db.status(db)


def check(db: str | None) -> dict[str, object]:
    """Every problem of the store (store/health.py), without changing it."""
    from ..store import health

    engine = store_db.connect(db)
    try:
        return {"database": store_db.public_url(db), "problems": health.diagnose(engine)}
    finally:
        engine.dispose()
