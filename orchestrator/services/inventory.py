"""Gather, check and store image inventories; read stored ones back; diff two of them."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError
from sqlalchemy.orm import Session, sessionmaker

from .. import audit
from ..catalog.core import Catalog
from ..components import Inventory
from ..errors import InfrastructureError, InputError, ValorchError
from ..executors.inventory import gather_inventory, image_digest
from ..hosts.detect import detect_local
from ..spec import Change, ImageSpec
from ..store import inventory_queries as iq

if TYPE_CHECKING:
    from ..executors.pull import PullEvent

#: what a caller shows while a container runs: status(text) as a context manager
Status = Callable[[str], AbstractContextManager[object]]

Factory = sessionmaker[Session]


@dataclass(frozen=True)
class Audit:
    """A gathered and stored inventory compared with the catalog."""

    image: ImageSpec
    run_id: str
    digest: str | None
    inventory: Inventory
    findings: tuple[audit.Finding, ...]

    @property
    def exit_code(self) -> int:
        return audit.exit_code(list(self.findings))

    def to_json(self) -> dict[str, Any]:
        inv, findings = self.inventory, list(self.findings)
        return {
            "image": self.image.alias,
            "reference": self.image.reference,
            "digest": self.digest,
            "run": self.run_id,
            "exit_code": audit.exit_code(findings),
            "drift": audit.has_drift(findings),
            "findings": [f.model_dump() for f in findings],
            "components": {c.name: c.value for c in inv.components if c.headline},
            # each framework package's import, as the gatherer tried it: "ok" or the error
            "imports": {
                c.name: c.extra.get("import_error") or "ok"
                for c in inv.components
                if c.headline and ("imports" in c.extra or "import_error" in c.extra)
            },
            "packages": sum(not c.headline for c in inv.components),
            "host_facts": dict(inv.host_facts),
            "errors": list(inv.errors),
        }


@dataclass(frozen=True)
class Stored:
    """A stored inventory and the run it belongs to."""

    run_id: str
    alias: str
    reference: str
    digest: str | None
    started: datetime
    expected: dict[str, str]
    inventory: Inventory

    def findings(self) -> list[audit.Finding]:
        """Compared with the components the image's catalog entry expected when it was stored."""
        return audit.compare(self.inventory, self.expected)


def gather_and_store(
    image: ImageSpec, factory: Factory, status: Status | None = None
) -> tuple[str, str | None, Inventory]:
    """Gather in the image, validate, store as a run: (run id, digest, inventory).
    ``status(text)`` is a context manager the caller shows while the container runs."""
    host = detect_local()
    said = f"gathering the inventory of {image.alias} ({image.reference}) ..."
    with status(said) if status else contextlib.nullcontext():
        raw, problem, digest = gather_inventory(image, host)
    if problem:
        raise InfrastructureError(
            problem,
            "valorch images show NAME shows the reference; docker image ls what "
            "the engine has (build the test images with make test-images)",
        )
    try:
        inv = audit.parse_inventory(raw)
    except (ValidationError, ValueError) as exc:
        raise InfrastructureError(
            f"the inventory probe in {image.reference} printed an invalid inventory: "
            f"{str(exc)[:400]}"
        ) from None
    with factory() as session:
        run = iq.store_inventory(
            session,
            image=image,
            digest=digest,
            host=host,
            executor="host" if image.executor == "host" else "docker",
            inventory=inv,
        )
        run_id = run.id
        session.commit()
    return run_id, digest, inv


def audit_image(image: ImageSpec, factory: Factory, status: Status | None = None) -> Audit:
    run_id, digest, inv = gather_and_store(image, factory, status)
    return Audit(image, run_id, digest, inv, tuple(audit.compare(inv, dict(image.components))))


def side(
    name: str, catalog: Catalog, factory: Factory, stored: bool, status: Status | None = None
) -> tuple[str, Inventory]:
    """A run id (or unique prefix) of a stored inventory, else an image gathered now
    (or its newest stored inventory with ``stored``): (label, inventory)."""
    with factory() as session:
        found = iq.load_inventory(session, name) if len(name) >= 4 else None
        if found:
            return f"{found[0].image.alias}@{found[0].id[:8]}", found[1]
        spec = catalog.resolve(name)
        found = iq.newest_inventory_of(session, spec.alias) if stored else None
    if stored and found is None:
        raise InputError(
            f"no stored inventory of {spec.alias}",
            f"run valorch inventory audit --image {spec.alias} first, or drop --stored",
        )
    # the same image (by digest) was inventoried before: an inventory is a function of the
    # image's content, so it is reused instead of gathered (and stored) again
    digest = None if stored else image_digest(spec, detect_local())
    if digest:
        with factory() as session:
            found = iq.inventory_of_digest(session, digest)
    if found is not None:
        return f"{spec.alias}@{found[0].id[:8]}", found[1]
    _, _, inv = gather_and_store(spec, factory, status)
    return spec.alias, inv


def stage(
    image: ImageSpec, pull: str = "missing", on_pull: Callable[[str, PullEvent], None] | None = None
) -> ImageSpec:
    """A registry image on this machine's engine before it is audited (pulled under ``pull``,
    by digest when pinned, verified); the image with its verified digest."""
    if image.executor != "docker" or image.local:
        return image
    from ..registry import RegistryClient
    from .pull import check_policy
    from .pull import stage as stage_image

    staged = stage_image(image, detect_local(), check_policy(pull), RegistryClient(), on_pull)
    if staged.index_digest and not image.digest:
        return image.model_copy(update={"digest": staged.index_digest})
    return image


def diff(
    a: str, b: str, catalog: Catalog, factory: Factory, stored: bool, status: Status | None = None
) -> tuple[str, str, list[Change]]:
    """Component by component, from side A to side B: (label A, label B, changes)."""
    (name_a, inv_a), (name_b, inv_b) = (side(x, catalog, factory, stored, status) for x in (a, b))
    return name_a, name_b, audit.diff(inv_a, inv_b)


def stored(factory: Factory, run: str, catalog: Catalog | None = None) -> Stored:
    """A stored inventory by run id (or unique prefix), else the newest stored inventory of
    the image ``run`` names (an alias, short alias, tag or reference), as ``inventory diff``
    takes either."""
    with factory() as session:
        found = iq.load_inventory(session, run) if len(run) >= 4 else None
        if found is None:
            alias = run
            if catalog is not None:
                with contextlib.suppress(ValorchError):
                    alias = catalog.resolve(run).alias
            found = iq.newest_inventory_of(session, alias)
        if found is None:
            raise InputError(
                f"no stored inventory for run or image '{run}'",
                "valorch inventory list shows the stored inventories; "
                f"valorch inventory audit --image {run} gathers one",
            )
        row, inv = found
        return Stored(
            row.id,
            row.image.alias,
            row.image.reference,
            row.image.digest,
            row.started,
            dict(row.image.components or {}),
            inv,
        )
