"""Accepted regressions (the ``acceptance`` table): add one, list them."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from .models import AcceptanceRow


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


def every(session: Session) -> list[AcceptanceRow]:
    """All acceptances, newest expiry first."""
    return list(session.scalars(select(AcceptanceRow).order_by(AcceptanceRow.until.desc())))
