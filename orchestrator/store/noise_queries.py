"""The run-to-run noise of timed checks, from the store's A/A history: earlier runs of
the same image (same digest) on the same host. Takes the caller's session."""

from __future__ import annotations

import math
from statistics import median
from typing import Sequence

from sqlalchemy import select
from sqlalchemy.orm import Session

from ..regression.changepoints import robust_sigma
from ..regression.noise import noisy
from .models import Check, Image, Result, Run

HISTORY = 20  # earlier runs looked at per image and host
MIN_RUNS = 4  # fewer quiet runs than this: the noise is not known


def run_noise(session: Session, run_ids: Sequence[str], history: int = HISTORY) -> dict[tuple[str, str], float]:
    """(image alias, check id) → run-to-run noise of log medians, for the checks of ``run_ids``."""
    out: dict[tuple[str, str], float] = {}
    heads = list(session.execute(select(Run.id, Run.image_id, Run.host_id, Run.started, Image.alias)
                                 .join(Image, Image.id == Run.image_id).where(Run.id.in_(list(run_ids)))))
    for run_id, image_id, host_id, started, alias in heads:
        earlier = list(session.scalars(
            select(Run.id).where(Run.image_id == image_id, Run.host_id == host_id, Run.id != run_id,
                                 Run.started <= started, Run.state.in_(("done", "failed")))
            .order_by(Run.started.desc()).limit(history)))
        if len(earlier) < MIN_RUNS:
            continue
        meds: dict[str, list[tuple[str, float]]] = {}
        q = (select(Result.run_id, Check.check_id, Result.samples, Result.metrics)
             .join(Check, Check.id == Result.check_pk).where(Result.run_id.in_(earlier), Result.status == "pass"))
        order = {rid: i for i, rid in enumerate(reversed(earlier))}
        for rid, check, samples, metrics in session.execute(q):
            if len(samples) >= 3 and not noisy(metrics):
                m = median(samples)
                if m > 0:
                    meds.setdefault(check, []).append((rid, m))
        for check, values in meds.items():
            if len(values) >= MIN_RUNS:
                values.sort(key=lambda v: order[v[0]])
                out[(alias, check)] = robust_sigma([math.log(m) for _, m in values])
    return out
