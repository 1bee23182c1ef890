"""Validate a job: plan it on its hosts (this machine, a hosts file, Slurm's nodes or a
Kubernetes cluster), dispatch it, resume it, reap leftovers, and report what is stored.
Shared by ``run`` and ``qualify``."""

from __future__ import annotations

import signal
import threading
import uuid
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator

from .. import executors
from ..catalog.core import Catalog
from ..errors import InfrastructureError, InputError, NoMatchingHostError
from ..hosts.detect import detect_local
from ..hosts.inventory import resolve_hosts
from ..scheduling.flight import Launch, Reporter, launch_planned
from ..scheduling.plan import PlannedRun, plan

if TYPE_CHECKING:
    from sqlalchemy.orm import Session, sessionmaker

    from ..store.queue import RunSummary

# No SQLAlchemy at import: a batch's first containers start before the store is opened
# (``_execute_once``); the store's modules are imported where they are used.


@dataclass(frozen=True)
class Placement:
    """Where a job's tasks go and who runs them."""

    planned: tuple[PlannedRun, ...]
    executor_for: Callable[[PlannedRun], Any]
    hosts: tuple[Any, ...] | None  # None: the cluster scheduler (Slurm, Kubernetes) places, no retries here
    history: dict[tuple[str, str], float] | None = None
    staged: dict = field(default_factory=dict)  # (host, alias) -> services.pull.Staged
    reap: bool = False  # leftover containers of finished runs to remove from the hosts


def local_executor(pr: PlannedRun) -> Any:
    """The host interpreter for the ``host`` image, else the host's Docker engine. The Docker
    SDK is imported only here, when a container runs."""
    return executors.create("host" if pr.image.executor == "host" else "docker", pr.host)


def place_job(spec: Any, cat: Catalog, factory: sessionmaker[Session], *, cpu_only: bool = False,
              executor: str = "docker", partition: str | None = None, hosts_file: Path | None = None,
              slurm_spool: Path | None = None, namespace: str = "default", pull: str = "missing",
              ca: str | None = None, on_pull: Callable | None = None,
              on_quarantine: Callable | None = None) -> Placement:
    """Where each task goes. On this machine's engine or a hosts file's: hosts with GPUs the
    batch needs pass L0 preflight first (a failing one is quarantined for the batch), and
    every image is staged on its host (pulled, pinned, verified) before anything is queued."""
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
    hist = history(factory)
    planned = plan(spec, cat, inventory, detect_local(), cpu_only=cpu_only, history=hist)
    if executor == "docker":
        inventory, planned = _quarantine(spec, cat, inventory, planned, cpu_only, hist, on_quarantine)
    staged: dict = {}
    if executor == "host":
        if any(pr.image.executor != "host" for pr in planned):
            raise InputError("--executor host runs only the image 'host' (the local interpreter)",
                             "use --executor docker for container images")
    elif any(pr.image.executor != "host" for pr in planned):
        if any(pr.image.executor == "docker" and not pr.image.local for pr in planned):
            from ..registry import RegistryClient
            from .pull import check_policy, stage_planned

            planned, staged = stage_planned(planned, check_policy(pull), RegistryClient(ca=ca), on_pull)
    return Placement(planned, local_executor, inventory, hist, staged,
                     reap=any(pr.image.executor != "host" for pr in planned))


def history(factory: Any) -> dict[tuple[str, str], float]:
    """The last measured duration of each (image, suite): the plan's history. Read without
    SQLAlchemy where the store allows it (``session.Deferred``)."""
    got = factory.history() if hasattr(factory, "history") else None
    if got is not None:
        return got
    from ..store import queries

    with factory() as session:
        return queries.suite_durations(session)


def _quarantine(spec: Any, cat: Catalog, inventory: tuple[Any, ...], planned: tuple[PlannedRun, ...], cpu_only: bool,
                hist: Any, on_quarantine: Callable | None) -> tuple[tuple[Any, ...], tuple[PlannedRun, ...]]:
    """L0 preflight of the hosts the plan gives GPU work; a failing host is quarantined for the
    batch (out of the inventory: no task is placed there, retries never go there) and the
    batch is planned again without it."""
    from .preflight import quarantine

    failed = quarantine((host, str(pr.image.backend)) for pr in planned
                        if pr.image.executor == "docker" and not any(t.cpu_only for t in pr.tasks)
                        for host in (pr.host, *(h for t in pr.tasks for h in t.nodes)))  # every node of a gang too
    if not failed:
        return inventory, planned
    for verdict in failed:
        if on_quarantine:
            on_quarantine(verdict)
    why = "; ".join(f"{v.host} ({v.reason})" for v in failed)
    bad = {v.host for v in failed}
    inventory = tuple(h for h in inventory if h.name not in bad)
    if not inventory:
        raise NoMatchingHostError(f"every host this batch could use failed its preflight and is quarantined: {why}",
                                  "valorch hosts check --level 0 shows each host's preflight")
    try:
        return inventory, plan(spec, cat, inventory, detect_local(), cpu_only=cpu_only, history=hist)
    except InfrastructureError as exc:
        raise type(exc)(f"{exc.message}\nquarantined for this batch: {why}", exc.hint) from None


def execute_placed(placed: Placement, spec: Any, factory: sessionmaker[Session], *,
                   reporter: Reporter | None = None, retries: int = 2, repeat: int = 1) -> list[RunSummary]:
    """Queue and run placed tasks; both image digests are recorded on each run. ``repeat``:
    the whole job that many times, one batch after the other (never side by side, so that
    repeated timings do not compete for the host): N runs of each image, which
    ``valorch diff latest:ALIAS:N`` pools (the run-to-run noise of a timing shrinks by √N)."""
    return [s for _ in range(repeat) for s in _execute_once(placed, spec, factory, reporter, retries)]


def _execute_once(placed: Placement, spec: Any, factory: sessionmaker[Session], reporter: Reporter | None,
                  retries: int) -> list[RunSummary]:
    if placed.hosts is None:
        from ..scheduling.dispatch import execute

        return execute(placed.planned, spec, factory, placed.executor_for, reporter)
    batch = str(uuid.uuid4())
    launch = launch_planned(placed.planned, placed.executor_for, reporter, placed.hosts, placed.history, spec.labels)
    with sweeping(placed.hosts, factory, batch):
        # The first wave starts before the store is opened: its containers run while SQLAlchemy
        # loads and the batch's rows are written (with the run ids the launch gave). Waiting for
        # them to start first keeps those imports from competing with their set-up.
        try:
            Launch.wait_started(launch.start_ready())
            with _holding_signals():  # Ctrl-C in the middle of an import would leave it half done
                from ..scheduling.dispatch import execute
            if placed.reap:
                reap(placed.hosts, factory, None)
        except BaseException as exc:
            _stopped_early(launch, spec, factory, batch, exc)
            raise
        summaries = execute(placed.planned, spec, factory, placed.executor_for, reporter, batch=batch,
                            hosts=placed.hosts, retries=retries, history=placed.history, launch=launch)
    if placed.staged:
        from ..store import queries

        with factory() as session:
            for s in summaries:
                got = placed.staged.get((s.host, s.image))
                if got is not None:  # the tag's (index) digest and the platform manifest's
                    queries.merge_run_meta(session, s.run_id, "image", got.meta())
            session.commit()
    return summaries


@contextmanager
def _holding_signals() -> Iterator[None]:
    """SIGINT and SIGTERM that arrive inside are held and given to their handlers on the way
    out (in the main thread; elsewhere signals do not arrive anyway)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held: list[int] = []
    before = {sig: signal.signal(sig, lambda signum, _frame: held.append(signum))
              for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in before.items():
            if handler is not None:  # None: not installed from Python, nothing to put back
                signal.signal(sig, handler)
        if held:
            signal.raise_signal(held[0])


def _stopped_early(launch: Launch, spec: Any, factory: sessionmaker[Session], batch: str, exc: BaseException) -> None:
    """A batch stopped (Ctrl-C, SIGTERM, a failing store) while its first wave ran and the
    store was loading: stopped and recorded as the dispatcher stops a batch, rows and all."""
    try:
        from ..scheduling.dispatch import abandon
        from ..store.queue import BatchInfo

        abandon(launch, BatchInfo(batch, spec.name, spec.spec_hash, spec.labels), factory, exc)
    except Exception:  # noqa: BLE001 - the store itself failed: the containers go all the same
        launch.flight.stop()


def execute_job(spec: Any, cat: Catalog, factory: sessionmaker[Session], *, reporter: Reporter | None = None,
                retries: int = 2, **where: Any) -> list[RunSummary]:
    """Plan, queue and run a job; the run summaries of its batch."""
    return execute_placed(place_job(spec, cat, factory, **where), spec, factory, reporter=reporter, retries=retries)


def resume(ref: str, cat: Catalog, factory: sessionmaker[Session], *, hosts_file: Path | None = None,
           retries: int = 2, reporter: Reporter | None = None) -> tuple[str, list[RunSummary]]:
    """Finish the tasks of an interrupted batch (after reaping its leftover containers)."""
    from ..scheduling.resume import resume as resume_batch
    from ..store import queue as tq

    inventory = resolve_hosts(hosts_file)
    with factory() as session:
        runs = tq.batch_of(session, ref)
        batch = runs[0].batch if runs else ref
    reap(inventory, factory, batch)
    with sweeping(inventory, factory, batch):
        return resume_batch(ref, factory, cat, inventory, local_executor, reporter, retries=retries)


@contextmanager
def sweeping(inventory: tuple[Any, ...], factory: sessionmaker[Session], batch: str) -> Iterator[None]:
    """An interrupted batch (Ctrl-C, SIGTERM, a failing database) leaves no container: the
    dispatcher has cancelled its tasks in flight; this sweeps the engines for any container
    labelled with one of the batch's runs, in case one was created while that happened."""
    try:
        yield
    except BaseException:
        try:
            reap(inventory, factory, batch)
        except Exception:  # noqa: BLE001 - the database may be what failed: the original error is the news
            pass
        raise


def reap(inventory: tuple[Any, ...], factory: sessionmaker[Session], batch: str | None) -> None:
    """Remove leftover valorch containers: those of ``batch`` (on --resume), and those of
    runs this database knows as finished or interrupted (a killed valorch leaves them)."""
    from ..executors.docker import reap_known
    from ..store import queries

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
    from ..render.junit import results_junit
    from ..store import queries
    from . import views

    with factory() as session:
        runs = [queries.get_run(session, s.run_id) for s in summaries]
        results = {r.id: queries.run_results(session, r.id) for r in runs}
        return RunReport(lines=tuple(views.summary_line(s) for s in summaries),
                         matrix_md=views.matrix_markdown(runs, results),
                         json=[views.run_json(r, results[r.id]) for r in runs],
                         junit=results_junit(runs, results, {s.run_id: s.infra_errors for s in summaries}),
                         failed=any(s.failed for s in summaries),
                         infra_errors=any(s.infra_errors for s in summaries),
                         protocol_errors=tuple(f"run {s.run_id[:8]} ({s.image}): {', '.join(s.protocol_errors[:10])}"
                                               for s in summaries if s.protocol_errors))
