"""Accepted regressions (the ``acceptance`` table): add one, revoke one, list them; and what
an acceptance is checked against (the check ids and environments the store holds)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from .models import AcceptanceRow, Check, Host, Image, Run


def add(  # the row's columns
    session: Session,
    check: str,
    env: str,
    reason: str,
    by: str,
    until: datetime,
    expected_rate: float | None,
    created: datetime,
) -> int:
    row = AcceptanceRow(
        check_id=check,
        env=env,
        reason=reason,
        by=by,
        until=until,
        expected_rate=expected_rate,
        created=created,
    )
    session.add(row)
    session.flush()
    return row.id


def get(session: Session, pk: int) -> AcceptanceRow | None:
    return session.get(AcceptanceRow, pk)


def revoke(session: Session, row: AcceptanceRow, by: str, reason: str, at: datetime) -> None:
    row.revoked, row.revoked_by, row.revoked_reason = at, by, reason
    session.flush()


def check_ids(session: Session) -> list[str]:
    """Every check id the store holds results of (command checks live only here)."""
    return sorted(set(session.scalars(select(Check.check_id).distinct())))


def environments(session: Session) -> list[tuple[str, dict[str, Any]]]:
    """(image alias, host spec) of every image × host pair the store holds a run of."""
    pairs = select(Run.image_id, Run.host_id).distinct().subquery()
    q = (
        select(Image.alias, Host.spec)
        .join(pairs, pairs.c.image_id == Image.id)
        .join(Host, Host.id == pairs.c.host_id)
    )
    return [(alias, spec or {}) for alias, spec in session.execute(q)]
