"""Migration 0010: a store at 0009 holding an acceptance is upgraded with the revocation's
columns, the acceptance kept and live; once revoked, the one function every reader of
acceptances uses (services.accept.live) leaves it out while the history keeps it."""

from __future__ import annotations

from datetime import date

from alembic import command
from sqlalchemy import create_engine, text

from orchestrator.services import accept
from orchestrator.store.db import (
    HEAD,
    _alembic_config,
    current_revision,
    open_engine,
    session_factory,
)


def test_a_0009_acceptance_survives_the_upgrade_and_can_be_revoked(tmp_path):
    path = tmp_path / "v.sqlite"
    old = create_engine(f"sqlite:///{path}")
    with old.begin() as conn:
        command.upgrade(_alembic_config(conn), "0009")
        conn.execute(
            text(
                "INSERT INTO acceptance (id, check_id, env, reason, by, until, expected_rate, "
                "created) VALUES (7, 'command.x', 'host@cpu', 'bug 1', 'alice', "
                "'2099-01-31 13:00:00.000000', NULL, '2026-01-01 00:00:00.000000')"
            )
        )
    old.dispose()
    engine = open_engine(str(path))
    assert current_revision(engine) == HEAD == "0011"
    factory = session_factory(engine)
    with factory() as session:
        (kept,) = accept.live(session)
    # a time of day stored before whole days: the acceptance covers that whole day
    assert kept.id == 7 and kept.until == date(2099, 1, 31) and kept.revoked is None
    got = accept.revoke(factory, 7, "bob", "fixed")
    assert got.revoked is not None and got.revoked.by == "bob"
    with factory() as session:
        assert accept.live(session) == []
    (row,) = accept.listing(str(path))
    assert row["state"] == "revoked" and row["revoked"]["reason"] == "fixed"
    engine.dispose()
