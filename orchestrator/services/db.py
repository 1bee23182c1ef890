"""`valorch db`: the schema of a results database, and the store's health.

The store (store/db.py, store/health.py) migrates, reads the revision and diagnoses; the
service decides what that means for the user: whether the schema is the one this valorch
needs, whether an upgrade changed anything, and that a store with problems is damaged
(exit 3, with what to do). Commands print these results."""

from __future__ import annotations

from dataclasses import asdict, dataclass

from ..errors import InfrastructureError
from ..store import db as store_db


@dataclass(frozen=True)
class SchemaChange:
    """What ``valorch db upgrade`` did: the revision before (None: no schema) and after."""

    before: str | None
    after: str

    @property
    def changed(self) -> bool:
        return self.before != self.after

    def as_json(self) -> dict[str, str | None]:
        return asdict(self)


@dataclass(frozen=True)
class SchemaStatus:
    """Where the database is, which schema it is at and which this valorch needs."""

    database: str
    dialect: str
    revision: str | None
    head: str

    @property
    def up_to_date(self) -> bool:
        return self.revision == self.head

    def as_json(self) -> dict[str, str | None]:
        return asdict(self)


@dataclass(frozen=True)
class StoreCheck:
    """Every problem of the store (store/health.py); damaged when there is any."""

    database: str
    problems: tuple[str, ...]

    def error(self) -> InfrastructureError | None:
        """The damaged store as the error the command ends with (exit 3), else None."""
        if not self.problems:
            return None
        return InfrastructureError(
            f"damaged store: {self.database} has {len(self.problems)} problem(s)",
            "restore it from a backup, or recover what is readable: sqlite3 FILE .recover | "
            "sqlite3 recovered.sqlite; a store behind this valorch: valorch db upgrade",
        )

    def as_json(self) -> dict[str, object]:
        return {"database": self.database, "problems": list(self.problems)}


def upgrade(db: str | None) -> SchemaChange:
    return SchemaChange(*store_db.upgrade(db))


def status(db: str | None) -> SchemaStatus:
    info = store_db.status(db)
    return SchemaStatus(
        str(info["database"]), str(info["dialect"]), info["revision"], str(info["head"])
    )


def check(db: str | None) -> StoreCheck:
    """Every problem of the store, without changing it."""
    from ..store import health

    engine = store_db.connect(db)
    try:
        return StoreCheck(store_db.public_url(db), tuple(health.diagnose(engine)))
    finally:
        engine.dispose()
