"""Accepted regressions (the ``acceptance`` table): add one, revoke one, list them; and what
an acceptance is checked against (the check ids and environments the store holds)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Row, insert, select, update
from sqlalchemy.orm import Session

from . import tables
from .models import Check, Host, Image, Run

ACC = tables.acceptance


def add(session: Session, **columns: Any) -> int:
    """Store an acceptance (its columns by name): its id."""
    q = insert(ACC).values(**columns).returning(ACC.c.id)
    return int(session.execute(q).scalar_one())


def get(session: Session, pk: int) -> Row[Any] | None:
    return session.execute(select(ACC).where(ACC.c.id == pk)).first()


def revoke(session: Session, pk: int, by: str, reason: str, at: datetime) -> Row[Any]:
    """Revoke acceptance ``pk``: its row as revoked."""
    q = update(ACC).where(ACC.c.id == pk).values(revoked=at, revoked_by=by, revoked_reason=reason)
    return session.execute(q.returning(ACC)).one()


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
