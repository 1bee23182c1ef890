"""The stages of the pipeline (``services/pipeline``) around the batch: plan a job on its
hosts (this machine, a hosts file, Slurm's nodes or a Kubernetes cluster), stage its images,
resume an interrupted batch, and report what is stored."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import executors, satellites
from ..catalog.core import Catalog
from ..errors import InfrastructureError, InputError, NoMatchingHostError
from ..executors.base import Executor
from ..hosts.detect import detect_local
from ..hosts.inventory import resolve_hosts
from ..scheduling.flight import Reporter
from ..scheduling.plan import PlannedRun, plan
from ..spec import HostSpec, JobSpec
from .batch import now, reap, sweeping
from .outcome import GATE_FAILED, INCONCLUSIVE, Outcome, Said, passed
from .placing import Placement, Where

if TYPE_CHECKING:
    from sqlalchemy.orm import Session, sessionmaker

    from ..executors.pull import PullEvent
    from ..regression.waivers import Waivers
    from ..store.models import Result, Run
    from ..store.queue import RunSummary
    from .preflight import Verdict
    from .session import Deferred

# No SQLAlchemy at import: commands that import this module without running a batch
# (``--help``, a plan that fails) do not load it; the store's modules are imported where
# they are used.


def local_executor(pr: PlannedRun) -> Executor:
    """The host interpreter for the ``host`` image, else the host's Docker engine. The Docker
    SDK is imported only here, when a container runs."""
    return executors.create("host" if pr.image.executor == "host" else "docker", pr.host)


def plan_job(
    spec: JobSpec,
    cat: Catalog,
    factory: sessionmaker[Session],
    where: Where,
    on_quarantine: Callable[[Verdict], None] | None = None,
) -> Placement:
    """Where each task goes, from the plan's history in the store. On this machine's engine
    or a hosts file's, hosts with GPUs the batch needs pass L0 preflight first (a failing one
    is quarantined for the batch, and ``on_quarantine`` hears of it)."""
    executor = where.executor
    if executor not in executors.NAMES:
        raise InputError(
            f"unknown --executor {executor!r}", f"use one of {', '.join(executors.NAMES)}"
        )
    if executor in ("slurm", "kubernetes"):
        return _on_cluster(spec, cat, where)
    if "host" in {image.executor for image in cat.images if image.alias in spec.images}:
        from ..executors import hostguard  # before anything is opened or runs

        passed = {name for suite in spec.suites for name in suite.pass_env}
        hostguard.check(passed, where.secrets_visible)
    inventory = resolve_hosts(where.hosts_file)
    hist = history(factory)
    planned = plan(spec, cat, inventory, detect_local(), cpu_only=where.cpu_only, history=hist)
    quarantined: list[dict[str, str]] = []
    if executor == "docker":

        def seen(verdict: Verdict) -> None:  # kept for the triage of the batch's failures
            quarantined.append({"host": verdict.host, "reason": verdict.reason, "at": now()})
            if on_quarantine:
                on_quarantine(verdict)

        inventory, planned = _quarantine(spec, cat, inventory, planned, where.cpu_only, hist, seen)
    if executor == "host" and any(pr.image.executor != "host" for pr in planned):
        raise InputError(
            "--executor host runs only the image 'host' (the local interpreter)",
            "use --executor docker for container images",
        )
    return Placement(
        planned,
        local_executor,
        inventory,
        hist,
        reap=any(pr.image.executor != "host" for pr in planned),
        catalog=cat,
        quarantined=tuple(quarantined),
    )


def stage_job(
    placed: Placement, where: Where, on_pull: Callable[[str, PullEvent], None] | None = None
) -> Placement:
    """Every image of a placement on this machine's engine or a hosts file's staged on its
    host (pulled, pinned, verified) before anything is queued; the planned runs then name
    what was staged. A cluster stages its own images."""
    if placed.hosts is None or not any(
        pr.image.executor == "docker" and not pr.image.local for pr in placed.planned
    ):
        return placed
    from ..registry import RegistryClient
    from .pull import check_policy, stage_planned

    planned, staged = stage_planned(
        placed.planned,
        check_policy(where.pull),
        RegistryClient(ca=str(where.ca) if where.ca else None),
        on_pull,
    )
    return replace(placed, planned=planned, staged=staged)  # the same images: reap stands


def _on_cluster(spec: JobSpec, cat: Catalog, where: Where) -> Placement:
    """Slurm's nodes or a Kubernetes cluster: the cluster places each job itself (by its
    nodes, or its node labels), no host inventory here; the ``host`` image stays local.
    The images are resolved first: an unknown image is the user's error (exit 2) whether
    or not the cluster answers, and no cluster is asked about a job that cannot run."""
    cat.select(spec.images)
    if where.executor == "slurm":
        from ..executors.slurm.client import SlurmCluster
        from ..executors.slurm.executor import default_spool
        from ..executors.slurm.nodes import cluster_hosts, rdma_nodes
        from ..scheduling.slurm import plan_on_slurm

        cluster = SlurmCluster(partition=where.partition)
        nodes = cluster_hosts(cluster)
        planned = plan_on_slurm(spec, cat, cluster, cpu_only=where.cpu_only, nodes=nodes)
        spool = where.slurm_spool or default_spool()
        remote: Executor = executors.create(
            "slurm", cluster, spool, labels=spec.labels, rdma_nodes=rdma_nodes(nodes)
        )
    else:
        k8s = satellites.load("k8s", "plan", "--executor kubernetes")  # orchestrator/ext/k8s/
        planned = k8s.plan_on_kubernetes(spec, cat, detect_local(), cpu_only=where.cpu_only)
        if where.rdma_resource and not any(t.multinode_gpu for pr in planned for t in pr.tasks):
            raise InputError(
                "--rdma-resource applies to a multi-node GPU task, and this run has none",
                "add a suite with nodes: 2 or more (multinode) on a GPU image, or drop "
                "--rdma-resource",
            )
        remote = executors.create(
            "kubernetes",
            namespace=where.namespace,
            node_labels=spec.labels,
            rdma_resource=where.rdma_resource,
        )

    def executor_for(pr: PlannedRun) -> Executor:
        return local_executor(pr) if pr.image.executor == "host" else remote

    return Placement(planned, executor_for, None, catalog=cat)


def history(factory: sessionmaker[Session] | Deferred) -> dict[tuple[str, str], float]:
    """The last measured duration of each (image, suite): the plan's history, read before
    the first container starts, with Core (store/reads.py); the ORM loads later, at the
    batch's first session."""
    from ..store import reads
    from .session import engine_of

    with engine_of(factory).connect() as conn:
        return reads.suite_durations(conn)


def _quarantine(
    spec: JobSpec,
    cat: Catalog,
    inventory: tuple[HostSpec, ...],
    planned: tuple[PlannedRun, ...],
    cpu_only: bool,
    hist: dict[tuple[str, str], float],
    on_quarantine: Callable[[Verdict], None],
) -> tuple[tuple[HostSpec, ...], tuple[PlannedRun, ...]]:
    """L0 preflight of the hosts the plan gives GPU work; a failing host is quarantined for the
    batch (out of the inventory: no task is placed there, retries never go there) and the
    batch is planned again without it."""
    from .preflight import quarantine

    failed = quarantine(
        (host, str(pr.image.backend))
        for pr in planned
        if pr.image.executor == "docker" and not any(t.cpu_only for t in pr.tasks)
        for host in (pr.host, *(h for t in pr.tasks for h in t.nodes))
    )  # every node of a gang too
    if not failed:
        return inventory, planned
    for verdict in failed:
        on_quarantine(verdict)
    why = "; ".join(f"{v.host} ({v.reason})" for v in failed)
    bad = {v.host for v in failed}
    inventory = tuple(h for h in inventory if h.name not in bad)
    if not inventory:
        raise NoMatchingHostError(
            f"every host this batch could use failed its preflight and is quarantined: {why}",
            "valorch hosts check --level 0 shows each host's preflight",
        )
    try:
        return inventory, plan(
            spec, cat, inventory, detect_local(), cpu_only=cpu_only, history=hist
        )
    except InfrastructureError as exc:
        raise type(exc)(f"{exc.message}\nquarantined for this batch: {why}", exc.hint) from None


def resume(
    ref: str, cat: Catalog, factory: sessionmaker[Session], where: Where, reporter: Reporter
) -> tuple[str, list[RunSummary]]:
    """Finish the tasks of an interrupted batch (after reaping its leftover containers) on
    ``where.hosts_file``'s hosts."""
    from ..scheduling.resume import resume as resume_batch
    from .recorder import StoreRecorder

    inventory = resolve_hosts(where.hosts_file)
    recorder = StoreRecorder(factory)
    recorder.refuse_foreign(ref)  # before anything is reaped or re-queued
    batch = recorder.batch_id(ref) or ref
    reap(inventory, factory, batch)
    with sweeping(inventory, factory, batch):
        batch = resume_batch(ref, recorder, cat, inventory, local_executor, reporter, where.retries)
        summaries = recorder.summaries(batch)
    from . import triage

    triage.record(factory, [s.run_id for s in summaries], cat)
    return batch, summaries


@dataclass(frozen=True)
class RunReport:
    """What a finished ``run`` prints and writes, as text, and how it ends (``outcome``)."""

    lines: tuple[str, ...]
    matrix_md: str
    json: list[dict[str, Any]]
    junit: str
    failed: bool
    infra_errors: bool
    tested: int  # checks of the batch that were exercised (a status other than NOT_EXERCISED)
    # "run: checks" whose results were tampered with or cut at the cap
    protocol_errors: tuple[str, ...] = ()
    gate: bool = True  # a failing check is exit 1 (--gate), else it is only reported
    resumed: str | None = None  # the batch --resume finished
    # when nothing was tested: how many checks ended in each status, and a few with their reason
    untested: tuple[str, ...] = ()
    allow_empty: bool = False  # --allow-empty: a run that tested nothing is exit 0

    @property
    def outcome(self) -> Outcome:
        """1 when gating and a check failed or its results were tampered with; else 3 for
        infrastructure errors and for tampered or flooded output (never 0: such a run proved
        nothing); else 1 when nothing was tested (every check skipped, unsupported or n/a, or
        no check at all) unless ``allow_empty``; else 0."""
        if self.protocol_errors:
            cut = "results tampered with or cut at the output cap"
            why = f"{cut}: {'; '.join(self.protocol_errors)}"
            said = tuple(
                Said("error", f"{line}: {cut}; these checks are 'error'")
                for line in self.protocol_errors
            )
            if self.gate:
                return Outcome(GATE_FAILED, "tampered", why, said)
            infra = (INFRA_SAID,) if self.infra_errors else ()
            return Outcome(INCONCLUSIVE, "tampered", why, said + infra)
        if self.gate and self.failed:
            return Outcome(GATE_FAILED, "failed", "a check failed, crashed or timed out")
        if self.infra_errors:
            return Outcome(INCONCLUSIVE, "infrastructure", INFRA_SAID.text, (INFRA_SAID,))
        if not self.tested and not self.allow_empty:
            why = "nothing was tested: " + (self.untested[0] if self.untested else "no checks ran")
            return Outcome(
                GATE_FAILED,
                "nothing tested",
                why,
                (
                    Said("error", why),
                    *(Said("plain", f"  {line}") for line in self.untested[1:]),
                    Said(
                        "plain",
                        "no evidence is not a pass: run where the checks can run (a GPU host, "
                        "--suite/--check), or pass --allow-empty to accept a run that tests nothing",
                    ),
                ),
            )
        if not self.tested:
            return passed("nothing was tested, accepted by --allow-empty")
        if self.failed:
            return passed("a check failed, not gated (--no-gate)")
        return passed("no check failed (or a waiver excused it)")


INFRA_SAID = Said("warn", "infrastructure errors: the affected checks are 'error' (inconclusive)")


def load_known_issues(
    path: Path | None, on_warning: Callable[[str], None] | None = None
) -> Waivers | None:
    """A known-issues file (regression/known_issues.py), or None without one; its warnings
    (entries that can never match) go to ``on_warning``."""
    if path is None:
        return None
    from ..regression import known_issues as ki

    loaded = ki.load(path)
    if on_warning is not None:
        for warning in loaded.warnings:
            on_warning(warning)
    return loaded


def stored_runs(session: Session, summaries: Sequence[RunSummary]) -> list[Run]:
    """The stored run of each summary; one that is gone (the database was changed under the
    batch) is an infrastructure error, never a run silently left out of the report."""
    from ..store import queries

    runs = [queries.get_run(session, s.run_id) for s in summaries]
    gone = [s.run_id for s, r in zip(summaries, runs, strict=True) if r is None]
    if gone:
        raise InfrastructureError(
            f"{'run' if len(gone) == 1 else 'runs'} {', '.join(g[:8] for g in gone)} of this batch "
            f"{'is' if len(gone) == 1 else 'are'} no longer in the results database",
            "was it cleared or pruned while the batch ran? run the job again",
        )
    return [r for r in runs if r is not None]


def report(
    factory: sessionmaker[Session],
    summaries: list[RunSummary],
    known_issues: Waivers | None = None,
    gate: bool = True,
    resumed: str | None = None,
    allow_empty: bool = False,
) -> RunReport:
    """``known_issues``: a failing check a live entry excuses is ``skipped`` in the JUnit with
    its reason, and does not fail the run's gate (``gate``: a failing check is exit 1)."""
    from ..hostclass import host_class
    from ..matrix.model import build
    from ..render.junit import results_junit
    from ..render.markdown import matrix_md
    from ..render.waivers import said
    from ..spec import FAILING, NOT_EXERCISED
    from ..store import queries, reads
    from . import views
    from .accept import joined

    with factory() as session:
        known_issues = joined(session, known_issues)  # the file's waivers and the store's
        runs = stored_runs(session, summaries)

        def excuse(run: Run, check: str, status: str) -> str | None:
            alias, backend = run.image.alias, str(run.image.backend)
            host = host_class(run.host.spec if run.host else {})
            hit = known_issues.excuse(alias, backend, check, status, host) if known_issues else None
            return said(hit) if hit is not None else None

        results: dict[str, Sequence[Result]] = {
            r.id: queries.run_results(session, r.id) for r in runs
        }
        last = {
            (r.id, res.check.check_id): (r, res)
            for r in runs
            for res in sorted(results[r.id], key=lambda x: x.attempt)
        }  # the last attempt of each check
        unexcused = any(
            res.status in FAILING and excuse(r, res.check.check_id, res.status) is None
            for r, res in last.values()
        )
        from .budgets import used, used_line

        budgets = {r.id: used(r.tasks) for r in runs}  # per tier: time used against its budget
        # the run's matrix, its cells decided by matrix.model.cell as ``matrix render`` decides
        matrix = build(views.observations(runs, results))
        return RunReport(
            lines=tuple(views.summary_line(s) for s in summaries)
            + tuple(used_line(r.id, r.image.alias, budgets[r.id]) for r in runs if budgets[r.id]),
            matrix_md=matrix_md(matrix, text=views.cell_text),
            json=[
                {
                    **views.run_json(shown),
                    "budgets": budgets[r.id],
                    "matrix": views.matrix_json(matrix, r.id),
                }
                for r in runs
                if (shown := reads.shown(session, r.id)) is not None  # stored: always
            ],
            junit=results_junit(
                runs,
                results,
                {s.run_id: s.infra_errors for s in summaries},
                excuse if known_issues is not None else None,
            ),
            failed=unexcused if known_issues is not None else any(s.failed for s in summaries),
            infra_errors=any(s.infra_errors for s in summaries),
            protocol_errors=tuple(
                f"run {s.run_id[:8]} ({s.image}): {', '.join(s.protocol_errors[:10])}"
                for s in summaries
                if s.protocol_errors
            ),
            gate=gate,
            resumed=resumed,
            tested=sum(1 for _r, res in last.values() if res.status not in NOT_EXERCISED),
            untested=untested([res for _r, res in last.values()]),
            allow_empty=allow_empty,
        )


def untested(last: Sequence[Result]) -> tuple[str, ...]:
    """Why a batch tested nothing: how many checks ended in each status (the first line), then
    up to five of them with their message."""
    from collections import Counter

    from ..words import count

    counts = Counter(r.status for r in last)
    if not last:
        return ("no check ran (the selection matched none, or every task ended before its checks)",)
    head = f"{count(len(last), 'check')}: " + ", ".join(f"{n} {s}" for s, n in counts.most_common())
    return (
        head,
        *(f"{r.check.check_id}: {r.status}: {r.message or '(no message)'}"[:300] for r in last[:5]),
    )
