"""services/db: what `valorch db` decides from the store (schema current or not, upgrade
changed anything or not, a store with problems is damaged: exit 3 with what to do)."""

from orchestrator.errors import InfrastructureError
from orchestrator.services import db as service
from orchestrator.store.db import HEAD


def test_a_new_file_needs_an_upgrade_and_then_is_current(tmp_path):
    db = str(tmp_path / "s.sqlite")
    before = service.status(db)
    assert (before.revision, before.head, before.up_to_date) == (None, HEAD, False)
    change = service.upgrade(db)
    assert change.changed and change.as_json() == {"before": None, "after": HEAD}
    assert not service.upgrade(db).changed
    assert service.status(db).up_to_date


def test_a_healthy_store_is_no_error_and_problems_are_a_damaged_store(tmp_path):
    db = str(tmp_path / "s.sqlite")
    service.upgrade(db)
    healthy = service.check(db)
    assert healthy.problems == () and healthy.error() is None
    damaged = service.StoreCheck("sqlite:///x.sqlite", ("a bad date", "a bad sample"))
    error = damaged.error()
    assert isinstance(error, InfrastructureError)
    assert "2 problem(s)" in str(error) and "sqlite:///x.sqlite" in str(error)
    assert damaged.as_json() == {
        "database": "sqlite:///x.sqlite",
        "problems": ["a bad date", "a bad sample"],
    }
