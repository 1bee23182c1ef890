"""Hosts: the inventory (or this machine as detected), GPU detection on each host's engine,
and the preflight of engines, images and the results database."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..catalog.adhoc import DEFAULT_SUITE
from ..catalog.core import Catalog, load_job
from ..errors import InputError
from ..hosts.detect import gpus_from_detection
from ..hosts.facts import Fact, host_facts
from ..hosts.inventory import resolve_hosts
from ..scheduling.plan import Unplaced
from ..spec import HostSpec, JobSpec, SuiteRef
from .outcome import INCONCLUSIVE, Outcome, Said, passed

if TYPE_CHECKING:  # the store is opened by ``hosts check`` alone: ``hosts list`` reads none
    from sqlalchemy.orm import Session, sessionmaker


def probe_with_facts(
    hosts_file: Path | None, name: str | None, image: str | None
) -> list[tuple[HostSpec, tuple[Fact, ...]]]:
    """Each host (or the one named) with the GPUs and kernel its engine's detection container
    found, and its facts (CPU, memory, kernel, GPU driver, ROCm / CUDA release, container
    runtime) from the same container and its engine."""
    from ..executors.engine_probe import detect

    hosts = resolve_hosts(hosts_file)
    chosen = [h for h in hosts if h.name == name] if name else hosts
    if name and not chosen:
        raise InputError(
            f"no host '{name}' in the inventory ({', '.join(h.name for h in hosts)})",
            "valorch hosts list --hosts FILE shows the names",
        )
    report = []
    for host in chosen:
        found = detect(host, image)
        gpus = {"gpus": gpus_from_detection(found), "kernel": found.get("kernel")}
        report.append((host.model_copy(update=gpus), host_facts(found)))
    return report


def record(dest: Path) -> dict[str, Any]:
    """Record this machine's GPU facts into ``dest`` (hosts/record.py), with the probe the local
    interpreter runs; refuses a destination that is a file or a non-empty directory of other data."""
    import os
    import sys

    from ..executors.base import PROBE_DIR
    from ..hosts.record import collect

    if dest.exists() and (
        not dest.is_dir() or (any(dest.iterdir()) and not (dest / "manifest.json").exists())
    ):
        raise InputError(
            f"--record {dest}: exists and is not an empty directory or an earlier record",
            "name a new directory (it is created)",
        )
    return collect(dest, sys.executable, PROBE_DIR, dict(os.environ))


@dataclass(frozen=True)
class HostsCheck:
    """The preflight's one decision (the table and ``--json`` render it and nothing else):
    ``db`` is "ok" or the problem; ``placement``, the job's images no host can run."""

    hosts: tuple[dict[str, Any], ...]
    db: str
    placement: tuple[Unplaced, ...] = ()

    @property
    def outcome(self) -> Outcome:
        """``hosts check`` exits 3 when a host or the results database has a problem, or when
        no host can run an image of the job (what ``valorch run`` would stop on, exit 3)."""
        bad = [r["host"] for r in self.hosts if r["problems"]]
        if self.db != "ok":
            bad.append("the results database")
        said = tuple(Said("error", f"error: {u.reason}") for u in self.placement)
        if self.placement:
            names = ", ".join(u.image for u in self.placement)
            what = "image" if len(self.placement) == 1 else "images"
            why = f"no host can run {what} {names}, as valorch run places them"
            if bad:
                why += "; problems on " + ", ".join(bad)
            return Outcome(INCONCLUSIVE, "infrastructure", why, said)
        if bad:
            return Outcome(INCONCLUSIVE, "infrastructure", "problems on " + ", ".join(bad))
        return passed("every host and the results database are ready")

    def as_json(self) -> dict[str, Any]:
        out = self.outcome
        return {
            "hosts": list(self.hosts),
            "db": self.db,
            "placement": [
                {"image": u.image, "ok": False, "reason": u.reason, "hint": u.hint}
                for u in self.placement
            ],
            "verdict": {"exit_code": out.code, "kind": out.kind, "reason": out.reason},
        }


def check(  # noqa: PLR0913 - one argument per option of valorch hosts check
    hosts_file: Path | None,
    catalog: Catalog,
    job: Path | None,
    images: Sequence[str],
    probe_image: str | None,
    open_sessions: Callable[[], sessionmaker[Session]],
    level: int | None = None,
    since_minutes: float = 60.0,
    cpu_only: bool = False,
) -> HostsCheck:
    """Preflight: one row per host and the results database's state; the job's (or the
    images') placement by the run's own planner, on the same hosts (``run --cpu-only`` with
    ``cpu_only``). ``open_sessions`` opens the database; a failure to open it is a problem
    reported, not raised. With ``level`` 0 or 1, the GPU preflight of each host too (L1 scans
    the kernel log of the last ``since_minutes``)."""
    from ..executors.engine_probe import check_engine
    from ..executors.pull import runnable
    from ..scheduling.plan import unplaceable

    spec = load_job(job, catalog) if job else None
    selected = [*(spec.images if spec else ()), *(images or ())]
    refs = [
        (i.reference, i.digest, runnable(i))
        for i in catalog.select(selected)
        if i.executor == "docker"
    ]
    hosts = resolve_hosts(hosts_file)
    placement: list[Unplaced] = []
    if spec is not None:
        placement += unplaceable(spec, catalog, hosts, cpu_only)
    if images:  # as ``run --image NAME`` places them: the default suite, no labels
        adhoc = JobSpec(name="adhoc", images=tuple(images), suites=(SuiteRef(name=DEFAULT_SUITE),))
        placement += [u for u in unplaceable(adhoc, catalog, hosts, cpu_only) if u not in placement]
    rows = [check_engine(h, refs, probe_image) for h in hosts]
    if level is not None:
        from datetime import datetime, timedelta

        from . import preflight as pf

        window = datetime.now().astimezone() - timedelta(minutes=since_minutes)
        for host, row in zip(hosts, rows, strict=True):
            verdicts = [
                pf.level0(host, b, probe_image) if level == 0 else pf.level1(host, b, window)
                for b in pf.backends_of(host)
            ]
            row["preflight"] = [v.as_dict() for v in verdicts]
            row["problems"] += [f"L{level} preflight: {v.reason}" for v in verdicts if not v.ok]
    from ..store.db import check_writable

    db_problem = None
    try:
        with open_sessions()() as session:
            check_writable(session)
    except Exception as exc:  # noqa: BLE001 - reported as the database's problem
        db_problem = f"results database not writable: {str(exc)[:300]}"
    return HostsCheck(tuple(rows), db_problem or "ok", tuple(placement))
