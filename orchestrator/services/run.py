"""Validate a job: plan it on its hosts (this machine, a hosts file, Slurm's nodes or a
Kubernetes cluster), dispatch it, resume it, reap leftovers, and report what is stored.
Shared by ``run`` and ``qualify``."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from sqlalchemy.orm import Session, sessionmaker

from .. import executors
from ..catalog.core import Catalog
from ..errors import InputError
from ..hosts.detect import detect_local
from ..hosts.inventory import resolve_hosts
from ..render.junit import results_junit
from ..scheduling.dispatch import Reporter, execute
from ..scheduling.plan import PlannedRun, plan
from ..scheduling.resume import resume as resume_batch
from ..store import queries
from ..store.queue import RunSummary
from . import views


@dataclass(frozen=True)
class Placement:
    """Where a job's tasks go and who runs them."""

    planned: tuple[PlannedRun, ...]
    executor_for: Callable[[PlannedRun], Any]
    hosts: tuple[Any, ...] | None  # None: the cluster scheduler (Slurm, Kubernetes) places, no retries here
    history: dict[tuple[str, str], float] | None = None


def local_executor(pr: PlannedRun) -> Any:
    """The host interpreter for the ``host`` image, else the host's Docker engine. The Docker
    SDK is imported only here, when a container runs."""
    return executors.create("host" if pr.image.executor == "host" else "docker", pr.host)


def place_job(spec: Any, cat: Catalog, factory: sessionmaker[Session], *, cpu_only: bool = False,
              executor: str = "docker", partition: str | None = None, hosts_file: Path | None = None,
              slurm_spool: Path | None = None, namespace: str = "default") -> Placement:
    if executor not in executors.NAMES:
        raise InputError(f"unknown --executor {executor!r}", f"use one of {', '.join(executors.NAMES)}")
    if executor == "slurm":  # Slurm's nodes are the hosts; it places each job itself
        from ..executors.slurm.client import SlurmCluster
        from ..executors.slurm.executor import default_spool
        from ..scheduling.slurm import plan_on_slurm

        cluster = SlurmCluster(partition=partition)
        planned = plan_on_slurm(spec, cat, cluster, cpu_only=cpu_only)
        remote = executors.create("slurm", cluster, slurm_spool or default_spool(), labels=spec.labels)
        return Placement(planned, lambda pr: local_executor(pr) if pr.image.executor == "host" else remote, None)
    if executor == "kubernetes":  # the cluster places pods by its node labels; no host inventory here
        from ..scheduling.kubernetes import plan_on_kubernetes

        planned = plan_on_kubernetes(spec, cat, detect_local(), cpu_only=cpu_only)
        remote = executors.create("kubernetes", namespace=namespace, node_labels=spec.labels)
        return Placement(planned, lambda pr: local_executor(pr) if pr.image.executor == "host" else remote, None)
    inventory = resolve_hosts(hosts_file)
    with factory() as session:
        hist = queries.suite_durations(session)
    planned = plan(spec, cat, inventory, detect_local(), cpu_only=cpu_only, history=hist)
    if executor == "host":
        if any(pr.image.executor != "host" for pr in planned):
            raise InputError("--executor host runs only the image 'host' (the local interpreter)",
                             "use --executor docker for container images")
    elif any(pr.image.executor != "host" for pr in planned):
        reap(inventory, factory, None)
    return Placement(planned, local_executor, inventory, hist)


def execute_job(spec: Any, cat: Catalog, factory: sessionmaker[Session], *, reporter: Reporter | None = None,
                retries: int = 2, **where: Any) -> list[RunSummary]:
    """Plan, queue and run a job; the run summaries of its batch."""
    placed = place_job(spec, cat, factory, **where)
    if placed.hosts is None:
        return execute(placed.planned, spec, factory, placed.executor_for, reporter)
    return execute(placed.planned, spec, factory, placed.executor_for, reporter, hosts=placed.hosts,
                   retries=retries, history=placed.history)


def resume(ref: str, cat: Catalog, factory: sessionmaker[Session], *, hosts_file: Path | None = None,
           retries: int = 2, reporter: Reporter | None = None) -> tuple[str, list[RunSummary]]:
    """Finish the tasks of an interrupted batch (after reaping its leftover containers)."""
    from ..store import queue as tq

    inventory = resolve_hosts(hosts_file)
    with factory() as session:
        runs = tq.batch_of(session, ref)
        batch = runs[0].batch if runs else ref
    reap(inventory, factory, batch)
    return resume_batch(ref, factory, cat, inventory, local_executor, reporter, retries=retries)


def reap(inventory: tuple[Any, ...], factory: sessionmaker[Session], batch: str | None) -> None:
    """Remove leftover valorch containers: those of ``batch`` (on --resume), and those of
    runs this database knows as finished or interrupted (a killed valorch leaves them)."""
    from ..executors.docker import reap_known

    with factory() as session:
        known = queries.run_ids(session, batch=batch, finished=batch is None)
    for host in inventory:
        reap_known(host, known)


@dataclass(frozen=True)
class RunReport:
    """What a finished ``run`` prints and writes, as text."""

    lines: tuple[str, ...]
    matrix_md: str
    json: list[dict[str, Any]]
    junit: str
    failed: bool
    infra_errors: bool
    protocol_errors: tuple[str, ...] = ()  # "run: checks" whose results were tampered with or cut at the cap


def report(factory: sessionmaker[Session], summaries: list[RunSummary]) -> RunReport:
    with factory() as session:
        runs = [queries.get_run(session, s.run_id) for s in summaries]
        results = {r.id: queries.run_results(session, r.id) for r in runs}
        return RunReport(lines=tuple(views.summary_line(s) for s in summaries),
                         matrix_md=views.matrix_markdown(runs, results),
                         json=[views.run_json(r, results[r.id]) for r in runs],
                         junit=results_junit(runs, results),
                         failed=any(s.failed for s in summaries),
                         infra_errors=any(s.infra_errors for s in summaries),
                         protocol_errors=tuple(f"run {s.run_id[:8]} ({s.image}): {', '.join(s.protocol_errors[:10])}"
                                               for s in summaries if s.protocol_errors))
