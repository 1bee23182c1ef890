"""The task queue's named transitions: the only place that writes run and task rows
for the scheduler. Each function takes an open session (the scheduler owns its
lifecycle) and leaves committing to the caller, except where a transition must be
one transaction on its own (``complete``)."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from ..errors import InfrastructureError, InputError
from ..spec import (  # BatchInfo, Pending: the scheduler's nouns, named here as before
    FAILING,
    BatchInfo,
    CheckInfo,
    Execution,
    HostSpec,
    ImageSpec,
    Pending,
    SuiteRef,
    Task,
    declared_hash,
    definition_hash,
    tampered,
)
from . import blobs, queries, tables
from .blobs import finite
from .models import Host, Image, Result, Run, TaskRow
from .reads import node_hosts

#: task states that need no more work; "error" (infrastructure) is finished for this
#: batch but is re-queued by ``reopen`` when the batch is resumed.
FINISHED = ("done", "error")
_Row = TypeVar("_Row", TaskRow, Run)


@dataclass
class RunSummary:
    run_id: str
    image: str
    host: str
    counts: Counter[str] = field(default_factory=Counter)
    timings: dict[str, dict[str, float]] = field(default_factory=dict)
    infra_errors: list[str] = field(default_factory=list)
    digest: str | None = None
    # checks whose results were tampered with, or cut at the output cap (transcript.TAMPERED / FLOODED)
    protocol_errors: list[str] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        return any(self.counts[s] for s in FAILING)


def enqueue(  # noqa: PLR0913  # the run row's columns; run_id and owner by keyword
    session: Session,
    ctx: BatchInfo,
    image: ImageSpec,
    host: HostSpec,
    executor: str,
    cpu_only: bool,
    suites: Sequence[SuiteRef],
    run_id: str | None = None,
    *,
    owner: str | None = None,
) -> tuple[str, dict[str, int]]:
    """A new run of ``image`` on ``host`` (with ``run_id``, else a new one) with one queued
    task per suite: (run id, task ids by suite). A run already stored under ``run_id`` is
    returned as it is: a stop (Ctrl-C, SIGTERM) that lands after its commit and before the
    dispatcher noted it has the dispatcher write the batch's rows again."""
    stored = session.get(Run, run_id) if run_id is not None else None
    if stored is not None:
        return stored.id, {t.suite: t.id for t in stored.tasks}
    run = queries.start_run(
        session,
        batch=ctx.batch,
        job=ctx.job,
        image=image,
        digest=None,
        host=host,
        executor=executor,
        spec_hash=ctx.spec_hash,
        cpu_only=cpu_only,
        suites=list(suites),
        run_id=run_id,
    )
    run.meta = {"_job": {"labels": list(ctx.labels)}, **({"_owner": owner} if owner else {})}
    session.flush()
    return run.id, {t.suite: t.id for t in run.tasks}


def run_for(session: Session, ctx: BatchInfo, task: Task, executor: str, cpu_only: bool) -> str:
    """The batch's run of this image on this host (created when missing)."""
    q = (
        select(Run.id)
        .join(Run.image)
        .join(Run.host)
        .where(Run.batch == ctx.batch, Image.alias == task.image.alias, Host.name == task.host.name)
    )
    run_id = session.scalars(q).first()
    return run_id or enqueue(session, ctx, task.image, task.host, executor, cpu_only, ())[0]


def start(session: Session, task_id: int) -> None:
    row = _row(session, TaskRow, task_id)
    row.state, row.started, row.tries = "running", queries.now(), row.tries + 1


def move(session: Session, ctx: BatchInfo, task_id: int, task: Task, reason: str = "") -> str:
    """Re-queue a task on ``task.host`` (its batch's run there, created when missing);
    a run left without tasks goes. Returns the task's new run id."""
    row = _row(session, TaskRow, task_id)
    old = row.run_id
    new = run_for(session, ctx, task, row.run.executor, row.run.cpu_only)
    row.run_id, row.state = new, "queued"
    if reason:
        row.error = f"retried after: {reason}"[:2000]
    session.flush()
    if new != old and not session.scalars(select(TaskRow).where(TaskRow.run_id == old)).first():
        session.delete(session.get(Run, old))
    return new


def complete(session: Session, run_id: str, task_id: int, task: Task, execution: Execution) -> None:
    """A task's results and its final state, in the caller's one transaction. An infrastructure
    failure is the task's state, never a column of error cells a matrix would show: its
    placeholder results are not stored."""
    if not execution.infra_error:
        libraries = {c.id: c.library for c in task.checks}
        defined = {c.id: definition_hash(c, task.suite) for c in task.checks}
        if task.nodes:  # a multi-node run's rows carry its node count (executors.gang.node_row)
            libraries.update({f"{c.id}[{len(task.nodes)}-nodes]": c.library for c in task.checks})
            defined.update({f"{c}[{len(task.nodes)}-nodes]": h for c, h in defined.items()})
        suite_wide = declared_hash(task.suite)  # a pytest workload's tests: what it declared
        if suite_wide is not None:
            defined.update(
                {r.check: suite_wide for r in execution.results if r.check not in defined}
            )
        queries.add_results(session, run_id, task_id, execution.results, libraries, defined)
    row = _row(session, TaskRow, task_id)
    row.state = "error" if execution.infra_error else "done"
    row.ended, row.timings, row.error = (
        queries.now(),
        {k: v for k, v in execution.timings.items() if math.isfinite(v)},
        execution.infra_error,
    )
    run = _row(session, Run, run_id)
    if execution.image_digest and run.image.digest != execution.image_digest:
        run.image = queries.image_row(session, task.image, execution.image_digest)
    gpus = [g.index for g in task.gpus or ()]
    run.meta = {
        **run.meta,
        task.suite.name: {
            "probe": finite(execution.meta),  # the probe's JSON may say NaN; JSON has none
            "exit_code": execution.exit_code,
            "gpus": gpus,
        },
        **({"image_id": execution.image_id} if execution.image_id else {}),
    }


def _row(session: Session, model: type[_Row], key: int | str) -> _Row:
    """The row a transition names; gone from under a running batch, it is the store's fault."""
    row = session.get(model, key)
    if row is None:
        raise InfrastructureError(
            f"the store has no {model.__tablename__} row {key} while a batch runs",
            "another process removed it (results prune?); resume the batch: valorch run --resume BATCH",
        )
    return row


def interrupt(session: Session, run_ids: Iterable[str]) -> None:
    for run_id in set(run_ids):
        run = session.get(Run, run_id)
        if run is not None and run.state == "running":
            run.state, run.ended = "interrupted", queries.now()


def finish(session: Session, batch: str) -> None:
    """Runs whose tasks all ended get their final state: failed when a task hit infrastructure,
    error when every task did (no matrix or latest-run query selects such a run)."""
    for run in session.scalars(select(Run).where(Run.batch == batch)).unique():
        states = {t.state for t in run.tasks}
        if states and states <= set(FINISHED):
            state = "error" if states == {"error"} else "failed" if "error" in states else "done"
            run.state, run.ended = state, queries.now()


def batch_of(session: Session, ref: str) -> list[Run]:
    """The runs of a batch, given the batch id or a run id (or prefix) of it; [] when unknown."""
    runs = list(session.scalars(select(Run).where(Run.batch == ref)).unique())
    if not runs:
        run = queries.get_run(session, ref)
        if run is not None:
            runs = list(session.scalars(select(Run).where(Run.batch == run.batch)).unique())
    return runs


def batch_info(run: Run) -> BatchInfo:
    labels = tuple((run.meta or {}).get("_job", {}).get("labels", ()))
    return BatchInfo(run.batch, run.job, run.spec_hash, labels)


def reopen(
    session: Session,
    runs: Sequence[Run],
    image_of: Callable[[Run], ImageSpec],
    checks_of: Callable[[SuiteRef], tuple[CheckInfo, ...]],
    owner: str | None = None,
) -> list[Pending]:
    """Re-queue every task of ``runs`` that did not finish with a verdict: interrupted ones and
    those that ended in an infrastructure error (the engine went away). Their stored results
    (none for an interrupted task; the inconclusive ``error`` rows of an infrastructure
    failure) are deleted so that the re-run stores each result once."""
    refuse_foreign(runs)
    todo: list[Pending] = []
    for run in runs:
        image = image_of(run)
        for t in run.tasks:
            if t.state == "done":
                continue
            suite, host = _revalidated(run, t)
            task = Task(
                image=image,
                suite=suite,
                host=host,
                checks=checks_of(suite),
                cpu_only=run.cpu_only and image.backend != "cpu",
            )
            todo.append(Pending(task, t.id, run.id, run.executor))
    if todo:
        session.execute(
            delete(tables.triage).where(tables.triage.c.run_id.in_({p.run_id for p in todo}))
        )  # decided again
        session.execute(delete(Result).where(Result.task_id.in_([p.task_id for p in todo])))
        for p in todo:
            row = _row(session, TaskRow, p.task_id)
            row.state, row.error = "queued", None
        for run in runs:
            if any(p.run_id == run.id for p in todo):
                run.state, run.ended = "running", None
                run.meta = {**(run.meta or {}), "_owner": owner}  # who runs it now
    return todo


def refuse_foreign(runs: Sequence[Run]) -> None:
    """Only runs this store made are resumed: an imported run (or a pushed one) is a record
    of another store, and its tasks' definitions came from a file, not from a job spec
    this store ran. Exit 2 naming the first, and where it came from."""
    for run in runs:
        where = queries.provenance(run.origin)
        if where:
            raise InputError(
                f"run {run.id} of batch {run.batch} was {where}: a run another store made "
                "is a record here, never resumed or re-run",
                f"run its job again here (valorch run --job {run.job}), or resume it in the "
                "store that made it",
            )


def _revalidated(run: Run, task: TaskRow) -> tuple[SuiteRef, HostSpec]:
    """The task's suite and host as resume rebuilds them, each checked against its model;
    a stored blob of the wrong shape is a damaged store (exit 3), never a traceback."""
    found = blobs.suite_spec(
        task.suite_spec, f"task row id={task.id} suite_spec"
    ) + blobs.host_spec(run.host.spec, f"host row id={run.host.id} spec")
    if found:
        raise InfrastructureError(
            f"damaged store: {'; '.join(found[:3])}",
            "valorch db check lists every damaged row; run the job again instead of resuming",
        )
    return SuiteRef.model_validate(task.suite_spec), HostSpec.model_validate(run.host.spec)


def summaries(session: Session, batch: str) -> list[RunSummary]:
    """One summary per run of the batch, from what is stored (the last attempt of each check)."""
    out = []
    for run in session.scalars(
        select(Run).where(Run.batch == batch).order_by(Run.started)
    ).unique():
        s = RunSummary(
            run_id=run.id,
            image=run.image.alias,
            host=", ".join(node_hosts(run.host.name, run.meta)),
            digest=run.image.digest,
        )
        last: dict[str, Result] = {}
        for r in queries.run_results(session, run.id):
            if r.check.check_id not in last or r.attempt >= last[r.check.check_id].attempt:
                last[r.check.check_id] = r
        s.counts.update(r.status for r in last.values())
        s.protocol_errors = sorted(cid for cid, r in last.items() if tampered(r.metrics))
        for t in run.tasks:
            s.timings[t.suite] = dict(t.timings or {})
            if t.state == "error" and t.error:
                s.infra_errors.append(t.error)
        out.append(s)
    return out
