"""The A/A history of timed checks: earlier runs of the same image (same digest) on the
same host, from which services/diff.py measures each check's run-to-run noise.
Takes the caller's session."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import LargeBinary, Text, select, type_coerce
from sqlalchemy.orm import Session

from .coltypes import stored_metrics, stored_samples
from .models import Check, Image, Result, Run

HISTORY = 20  # earlier runs looked at per image and host


def aa_history(
    session: Session, run_ids: Sequence[str]
) -> dict[tuple[str, str], list[tuple[list[float], dict[str, Any]]]]:
    """(image alias, check id) → [(samples, metrics)] of its passing results in the earlier
    runs of the same image row (same digest) on the same host, oldest first."""
    out: dict[tuple[str, str], list[tuple[list[float], dict[str, Any]]]] = {}
    heads = list(
        session.execute(
            select(Run.id, Run.image_id, Run.host_id, Run.started, Image.alias)
            .join(Image, Image.id == Run.image_id)
            .where(Run.id.in_(list(run_ids)))
        )
    )
    for run_id, image_id, host_id, started, alias in heads:
        earlier = list(
            session.scalars(
                select(Run.id)
                .where(
                    Run.image_id == image_id,
                    Run.host_id == host_id,
                    Run.id != run_id,
                    Run.started <= started,
                    Run.state.in_(("done", "failed")),
                )
                .order_by(Run.started.desc())
                .limit(HISTORY)
            )
        )
        if not earlier:
            continue
        order = {rid: i for i, rid in enumerate(reversed(earlier))}
        # Core rows, samples and metrics raw and decoded here (empty metrics not parsed):
        # through the column types they were most of the diff confirmations of a large site
        rows = session.connection().execute(
            select(
                Result.run_id,
                Check.check_id,
                type_coerce(Result.samples, LargeBinary),
                type_coerce(Result.metrics, Text),
            )
            .join(Check, Check.id == Result.check_pk)
            .where(Result.run_id.in_(earlier), Result.status == "pass")
        )
        per: dict[str, list[tuple[int, list[float], dict[str, Any]]]] = {}
        for rid, check, raw, metrics in rows:
            samples = list(stored_samples(raw))
            if samples:
                per.setdefault(check, []).append(
                    (order[rid], samples, stored_metrics(metrics) or {})
                )
        for check, items in per.items():
            items.sort(key=lambda x: x[0])
            out[(alias, check)] = [(s, m) for _, s, m in items]
    return out
