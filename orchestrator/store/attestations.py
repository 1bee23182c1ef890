"""Signed attestations in the results store, beside their runs (models.Attestation)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from .models import Attestation, MatrixVersion, Run


def add(  # noqa: PLR0913  # keyword-only, one per column of the row it adds
    session: Session,
    *,
    run_id: str | None,
    source: str,
    subject: str,
    digest: str,
    predicate_type: str,
    envelope: str,
    keyid: str,
    created: datetime,
) -> Attestation:
    row = Attestation(
        run_id=run_id,
        source=source,
        subject=subject,
        digest=digest,
        predicate_type=predicate_type,
        envelope=envelope,
        keyid=keyid,
        created=created,
    )
    session.add(row)
    session.flush()
    return row


def mark_pushed(session: Session, ids: Sequence[int], where: str) -> None:
    for row in session.scalars(select(Attestation).where(Attestation.id.in_(list(ids)))):
        row.pushed = where


def runs(session: Session, ids: Sequence[str]) -> list[Run]:
    return list(
        session.scalars(select(Run).where(Run.id.in_(list(ids))).order_by(Run.started)).unique()
    )


def version_runs(session: Session, version: str) -> list[str] | None:
    """The run ids a published matrix version's cells name (None: no such version)."""
    mv = session.scalars(select(MatrixVersion).where(MatrixVersion.version == version)).first()
    if mv is None:
        return None
    return sorted({r for c in mv.cells for r in (c.runs or []) if isinstance(r, str)})
