"""Signed attestations in the results store, beside their runs (tables.attestation)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import Row, insert, select, update
from sqlalchemy.orm import Session

from . import tables
from .models import Run

ATT, VERSION, CELL = tables.attestation, tables.matrix_version.c, tables.matrix_cell.c


def add(session: Session, **columns: Any) -> Row[Any]:
    """Store one attestation (run_id, source, subject, digest, predicate_type, envelope,
    keyid, created); its row as stored."""
    return session.execute(insert(ATT).values(**columns).returning(ATT)).one()


def mark_pushed(session: Session, ids: Sequence[int], where: str) -> None:
    session.execute(update(ATT).where(ATT.c.id.in_(list(ids))).values(pushed=where))


def runs(session: Session, ids: Sequence[str]) -> list[Run]:
    return list(
        session.scalars(select(Run).where(Run.id.in_(list(ids))).order_by(Run.started)).unique()
    )


def version_runs(session: Session, version: str) -> list[str] | None:
    """The run ids a published matrix version's cells name (None: no such version)."""
    pk = session.scalar(select(VERSION.id).where(VERSION.version == version))
    if pk is None:
        return None
    cells = session.scalars(select(CELL.runs).where(CELL.matrix_id == pk))
    return sorted({r for named in cells for r in (named or []) if isinstance(r, str)})
