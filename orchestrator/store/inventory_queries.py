"""Reads and writes of stored inventories (table ``inventory``, one row per component).

An audit is a run with job ``inventory`` and no tasks; the gatherer's host
facts and errors go to the run's ``meta`` so that the ``components.Inventory`` can
be rebuilt exactly. Every function takes the session it works in; committing
is the caller's business.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from typing import Any, cast

from sqlalchemy import ColumnElement, exists, insert, select
from sqlalchemy.orm import Session

from ..components import Component, Inventory, Source
from ..spec import HostSpec, ImageSpec
from . import tables
from .models import Image, Run
from .queries import get_run, now, start_run

JOB = "inventory"
INV = tables.inventory


def store_inventory(
    session: Session,
    *,
    image: ImageSpec,
    digest: str | None,
    host: HostSpec,
    executor: str,
    inventory: Inventory,
    batch: str | None = None,
    meta: dict[str, Any] | None = None,
) -> Run:
    """A finished run (job ``inventory``, no suites) holding every component."""
    spec_hash = hashlib.sha256(
        json.dumps(
            {"job": JOB, "image": image.alias, "expected": image.components}, sort_keys=True
        ).encode()
    ).hexdigest()[:16]
    run = start_run(
        session,
        batch=batch or str(uuid.uuid4()),
        job=JOB,
        image=image,
        digest=digest,
        host=host,
        executor=executor,
        spec_hash=spec_hash,
        cpu_only=True,
        suites=[],
    )
    add_inventory(session, run.id, inventory)
    run.meta = {
        **(meta or {}),
        "host_facts": dict(inventory.host_facts),
        "inventory_errors": list(inventory.errors),
    }
    run.state = "done"
    run.ended = now()
    session.flush()
    return run


def add_inventory(session: Session, run_id: str, inventory: Inventory) -> int:
    """Store the components of an inventory for a run (an existing run of any job)."""
    have = set(session.scalars(select(INV.c.component).where(INV.c.run_id == run_id)))
    rows = [
        {
            "run_id": run_id,
            "component": c.name,
            "value": c.value,
            "source": c.source,
            "evidence": c.evidence,
            "extra": dict(c.extra),
        }
        for c in inventory.components
        if c.name not in have
    ]
    if rows:
        session.execute(insert(INV), rows)
    return len(rows)


def load_inventory(session: Session, run_id: str) -> tuple[Run, Inventory] | None:
    """The run (id or unique prefix) and its inventory; None when it has none."""
    run = get_run(session, run_id)
    if run is None:
        return None
    rows = session.execute(select(INV).where(INV.c.run_id == run.id).order_by(INV.c.id)).all()
    if not rows:
        return None
    meta = run.meta or {}
    inv = Inventory(
        components=tuple(
            Component(
                name=r.component,
                value=r.value,
                source=cast(Source, r.source),  # written from a Component, read back as its text
                evidence=r.evidence or "",
                extra=dict(r.extra or {}),
            )
            for r in rows
        ),
        host_facts=dict(meta.get("host_facts") or {}),
        errors=tuple(meta.get("inventory_errors") or ()),
    )
    return run, inv


def newest_inventory_of(session: Session, image: str) -> tuple[Run, Inventory] | None:
    """One image's most recent stored inventory (by alias or reference): its run and the whole
    Inventory. Every image's components at once: ``matrix_store.newest_components_by_image``."""
    return _newest(session, (Image.alias == image) | (Image.reference == image))


def inventory_of_digest(session: Session, digest: str) -> tuple[Run, Inventory] | None:
    """The most recent stored inventory of the image with this digest (any alias)."""
    return _newest(session, Image.digest == digest)


def _newest(session: Session, image: ColumnElement[bool]) -> tuple[Run, Inventory] | None:
    """The newest run of an image ``image`` selects that stored an inventory, with it."""
    has_rows = exists().where(INV.c.run_id == Run.id)
    q = select(Run.id).join(Run.image).where(image, has_rows).order_by(Run.started.desc())
    run_id = session.scalars(q.limit(1)).first()
    return load_inventory(session, run_id) if run_id else None
