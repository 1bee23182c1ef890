"""The history triage compares a failing check with: the same checks' results in the other
finished runs of the same image (by alias, any digest), with their digests and hosts."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Sequence

from sqlalchemy import select
from sqlalchemy.orm import Session

from .models import Check, Host, Image, Result, Run

FINISHED = ("done", "failed")


def check_history(session: Session, alias: str, check_ids: Sequence[str], exclude_run: str
                  ) -> list[tuple[str, str, str, dict[str, Any], datetime, str, int, str]]:
    """(run, digest, host name, host spec, started, check id, attempt, status) of ``check_ids`` in
    the finished runs of image ``alias`` other than ``exclude_run``, oldest first."""
    if not check_ids:
        return []
    q = (select(Run.id, Image.digest, Host.name, Host.spec, Run.started, Check.check_id, Result.attempt, Result.status)
         .join(Image, Run.image_id == Image.id).join(Host, Run.host_id == Host.id)
         .join(Result, Result.run_id == Run.id).join(Check, Result.check_pk == Check.id)
         .where(Image.alias == alias, Run.id != exclude_run, Run.state.in_(FINISHED), Run.cpu_only.is_(False),
                Check.check_id.in_(list(check_ids)))
         .order_by(Run.started, Result.attempt))
    return [tuple(r) for r in session.execute(q)]
