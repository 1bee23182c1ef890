"""Plan (job × images × hosts) → queued tasks (DB) → concurrent dispatch → retries → resume.

- ``plan`` expands a job into (image, suite) tasks and places them on hosts
  (``placement.place``: longest first onto the earliest-free matching slot). A
  run is one image on one host; its tasks are rows of the ``task`` table.
- ``execute`` / ``resume`` dispatch the queued tasks concurrently: one per GPU
  on GPU hosts (each task pinned to its own GPUs), ``host.slots`` CPU tasks per
  host. Threads are enough: the work happens in containers.
- An infrastructure error (engine unreachable, container start failure, image
  missing, host lost) is retried on another matching host, up to ``retries``
  times; its error results are not stored. Validation failures are never
  retried here (suite ``attempts`` handle flakiness).
- A task's results and its ``done`` state are stored in one transaction, so an
  interrupted task has no results. ``resume`` re-queues every task of the batch
  that is not done, deletes any result of such a task (none is expected) and runs
  it again: nothing is lost or stored twice.
"""

from __future__ import annotations

import queue
import threading
import uuid
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from .catalog import Catalog
from .errors import NoMatchingHostError, ValorchError
from .hosts import Requirement
from .placement import Need, place
from .probe.registry import select as select_checks
from .protocol import infrastructure_failure
from .spec import GPU, CheckInfo, CheckResult, Execution, HostSpec, ImageSpec, JobSpec, SuiteRef, Task
from .store import queries
from .store.models import Host, Image, Result, Run, TaskRow

DEFAULT_RETRIES = 2


@dataclass(frozen=True)
class PlannedRun:
    image: ImageSpec
    host: HostSpec
    tasks: tuple[Task, ...]


def suite_checks(suite: SuiteRef) -> tuple[CheckInfo, ...]:
    declaration = suite.declaration()
    if declaration is not None:  # command checks / a pytest workload declared by the job
        from .probe.declared import infos

        return tuple(CheckInfo.model_validate(i) for i in infos(suite.name, declaration, suite.checks))
    _, checks = select_checks(suite.name, suite.checks)
    return tuple(CheckInfo.model_validate({k: v for k, v in c.info().items()}) for c in checks)


def requirement(image: ImageSpec, labels: tuple[str, ...] = (), cpu_only: bool = False) -> Requirement:
    if cpu_only or image.backend == "cpu":
        return Requirement(backend="cpu", labels=labels, gpus=0)
    return Requirement.of(image, labels=labels)


def expected_duration(task: Task, history: dict[tuple[str, str], float] | None = None) -> float:
    """Seconds a task is expected to take: its last measured time, else a guess per check."""
    if history and (task.image.alias, task.suite.name) in history:
        return history[(task.image.alias, task.suite.name)]
    return 10.0 + 2.0 * len(task.checks)


def task_key(task: Task) -> str:
    return f"{task.image.alias}/{task.suite.name}"


def plan(job: JobSpec, catalog: Catalog, hosts: tuple[HostSpec, ...], local: HostSpec,
         cpu_only: bool = False, history: dict[tuple[str, str], float] | None = None) -> tuple[PlannedRun, ...]:
    """Every (image, suite) of the job placed on a matching host; raises NoMatchingHostError
    (exit 3) before anything runs when an image has nowhere to go."""
    tasks: list[Task] = []
    for image in catalog.select(job.images):
        for s in job.suites:
            tasks.append(Task(image=image, suite=s, host=local if image.executor == "host" else hosts[0],
                              checks=suite_checks(s), cpu_only=cpu_only and image.backend != "cpu"))
    placed = {task_key(t): t.host for t in tasks if t.image.executor == "host"}
    needs = [Need(task_key(t), requirement(t.image, job.labels, cpu_only), expected_duration(t, history),
                  label=t.image.alias) for t in tasks if t.image.executor != "host"]
    by_name = {h.name: h for h in hosts}
    if needs:
        placement = place(needs, hosts)
        placed.update({a.key: by_name[a.host] for a in placement.assignments})
    groups: dict[tuple[str, str], list[Task]] = {}
    for t in tasks:
        host = placed[task_key(t)]
        groups.setdefault((t.image.alias, host.name), []).append(t.model_copy(update={"host": host}))
    return tuple(PlannedRun(ts[0].image, ts[0].host, tuple(ts)) for ts in groups.values())


class Executor(Protocol):
    name: str

    def execute(self, task: Task, run_id: str, on_result: Callable[[CheckResult], None] | None = None
                ) -> Execution: ...


class Reporter(Protocol):
    def task_started(self, task: Task) -> None: ...

    def result(self, task: Task, result: CheckResult) -> None: ...

    def task_finished(self, task: Task, execution: Execution) -> None: ...


@dataclass
class RunSummary:
    run_id: str
    image: str
    host: str
    counts: Counter = field(default_factory=Counter)
    timings: dict[str, dict[str, float]] = field(default_factory=dict)
    infra_errors: list[str] = field(default_factory=list)
    digest: str | None = None

    @property
    def failed(self) -> bool:
        return any(self.counts[s] for s in ("fail", "crash", "timeout"))


@dataclass
class _Item:
    task: Task
    run_id: str
    task_id: int
    expected: float
    tried: set[str] = field(default_factory=set)


@dataclass(frozen=True)
class _Batch:
    batch: str
    job: str
    spec_hash: str
    labels: tuple[str, ...]


class _Pool:
    """Free slots of one host: CPU slots and GPUs."""

    def __init__(self, host: HostSpec) -> None:
        self.host = host
        self.cpu = host.slots
        self.gpus = {g.index: g for g in host.gpus}

    def take(self, req: Requirement) -> tuple[GPU, ...] | None:
        if req.backend == "cpu":
            if self.cpu <= 0:
                return None
            self.cpu -= 1
            return ()
        vendor = "amd" if req.backend == "rocm" else "nvidia"
        ok = [g for g in self.gpus.values() if g.vendor == vendor and (not req.archs or g.arch in req.archs)]
        if len(ok) < max(1, req.gpus):
            return None
        chosen = tuple(sorted(ok, key=lambda g: g.index)[:max(1, req.gpus)])
        for g in chosen:
            del self.gpus[g.index]
        return chosen

    def give(self, gpus: tuple[GPU, ...] | None) -> None:
        if gpus:
            self.gpus.update({g.index: g for g in gpus})
        elif gpus is not None:
            self.cpu += 1


def _req(item: _Item, ctx: _Batch) -> Requirement:
    return requirement(item.task.image, ctx.labels, item.task.cpu_only)


def execute(planned: tuple[PlannedRun, ...], job: JobSpec, sessions: sessionmaker[Session],
            executor_for: Callable[[PlannedRun], Executor], reporter: Reporter | None = None,
            batch: str | None = None, hosts: tuple[HostSpec, ...] | None = None,
            retries: int = DEFAULT_RETRIES, history: dict[tuple[str, str], float] | None = None
            ) -> list[RunSummary]:
    """Queue every planned task in the DB, then run them concurrently on their hosts."""
    ctx = _Batch(batch or str(uuid.uuid4()), job.name, job.spec_hash, job.labels)
    items: list[_Item] = []
    for pr in planned:
        with sessions() as session:
            run = queries.start_run(session, batch=ctx.batch, job=job.name, image=pr.image, digest=None,
                                    host=pr.host, executor=executor_for(pr).name, spec_hash=job.spec_hash,
                                    cpu_only=any(t.cpu_only for t in pr.tasks), suites=[t.suite for t in pr.tasks])
            run.meta = {"_job": {"labels": list(job.labels)}}
            ids = {t.suite: t.id for t in run.tasks}
            session.commit()
            items += [_Item(t, run.id, ids[t.suite.name], expected_duration(t, history)) for t in pr.tasks]
    all_hosts = tuple(hosts or ()) or tuple({pr.host.name: pr.host for pr in planned}.values())
    dispatch(items, ctx, all_hosts, sessions, executor_for, reporter, retries)
    return summaries(sessions, ctx.batch)


def dispatch(items: list[_Item], ctx: _Batch, hosts: tuple[HostSpec, ...], sessions: sessionmaker[Session],
             executor_for: Callable[[PlannedRun], Executor], reporter: Reporter | None, retries: int) -> None:
    pools = {h.name: _Pool(h) for h in hosts}
    for it in items:
        pools.setdefault(it.task.host.name, _Pool(it.task.host))
    pending = sorted(items, key=lambda it: -it.expected)
    done: queue.Queue[tuple[_Item, tuple[GPU, ...] | None, Execution]] = queue.Queue()
    running = 0
    for it in pending:
        _hook(reporter, "task_queued", it.task, it.expected)
    try:
        while pending or running:
            for it in list(pending):
                gpus = pools[it.task.host.name].take(_req(it, ctx))
                if gpus is None:
                    continue
                pending.remove(it)
                task = it.task.model_copy(update={"gpus": gpus or None}) if gpus else it.task
                _mark(sessions, it, "running")
                if reporter:
                    reporter.task_started(task)
                threading.Thread(target=_work, args=(it, task, gpus, executor_for, reporter, done),
                                 name=f"valorch-{task_key(task)}", daemon=True).start()
                running += 1
            if not running:
                break
            it, gpus, execution = done.get()
            running -= 1
            pools[it.task.host.name].give(gpus)
            it.tried.add(it.task.host.name)
            if execution.infra_error and len(it.tried) <= retries:
                moved = _move(it, ctx, hosts, pools, pending, sessions, execution.infra_error)
                if moved:
                    _hook(reporter, "task_retried", it.task, execution.infra_error)
                    pending.append(it)
                    continue
            _store(sessions, it, execution)
            if reporter:
                reporter.task_finished(it.task, execution)
    except BaseException:
        with sessions() as session:
            for run_id in {it.run_id for it in items}:
                run = session.get(Run, run_id)
                if run is not None and run.state == "running":
                    run.state, run.ended = "interrupted", queries.now()
            session.commit()
        raise
    _finish_runs(sessions, ctx.batch)


def _hook(reporter: Any, name: str, *args: Any) -> None:
    fn = getattr(reporter, name, None)
    if fn is not None:
        fn(*args)


def _work(it: _Item, task: Task, gpus: tuple[GPU, ...] | None, executor_for: Callable[[PlannedRun], Executor],
          reporter: Reporter | None, done: queue.Queue) -> None:
    try:
        executor = executor_for(PlannedRun(task.image, task.host, (task,)))
        execution = executor.execute(task, it.run_id, (lambda r: reporter.result(task, r)) if reporter else None)
    except ValorchError as exc:  # e.g. the engine does not answer
        execution = infrastructure_failure(task, exc.message)
    except Exception as exc:  # noqa: BLE001 - a harness failure is data, never a lost thread
        msg = f"{type(exc).__name__}: {str(exc)[:500]}"
        execution = infrastructure_failure(task, msg)
    done.put((it, gpus, execution))


def _move(it: _Item, ctx: _Batch, hosts: tuple[HostSpec, ...], pools: dict[str, _Pool], pending: list[_Item],
          sessions: sessionmaker[Session], reason: str = "") -> bool:
    """Re-place ``it`` on a matching host it has not tried; False when there is none."""
    if it.task.image.executor == "host":
        return False
    load = {h: sum(p.expected for p in pending if p.task.host.name == h) / max(1, pools[h].host.slots)
            for h in pools}
    try:
        a = place([Need("retry", _req(it, ctx), it.expected, frozenset(it.tried))], hosts, busy=load).assignments[0]
    except NoMatchingHostError:
        return False
    if a.host in it.tried:
        return False
    host = pools[a.host].host
    it.task = it.task.model_copy(update={"host": host})
    with sessions() as session:
        row = session.get(TaskRow, it.task_id)
        old = row.run_id
        run = _run_for(session, ctx, it.task, row.run.executor, row.run.cpu_only)
        row.run_id, row.state, row.error = run.id, "queued", f"retried after: {reason}"[:2000]
        session.flush()
        if not session.scalars(select(TaskRow).where(TaskRow.run_id == old)).first():
            session.delete(session.get(Run, old))
        session.commit()
        it.run_id = run.id
    return True


def _run_for(session: Session, ctx: _Batch, task: Task, executor: str, cpu_only: bool) -> Run:
    """The batch's run of this image on this host (created when missing)."""
    q = (select(Run).join(Run.image).join(Run.host)
         .where(Run.batch == ctx.batch, Image.alias == task.image.alias, Host.name == task.host.name))
    run = session.scalars(q).first()
    if run is None:
        run = queries.start_run(session, batch=ctx.batch, job=ctx.job, image=task.image, digest=None,
                                host=task.host, executor=executor, spec_hash=ctx.spec_hash, cpu_only=cpu_only,
                                suites=[])
        run.meta = {"_job": {"labels": list(ctx.labels)}}
    return run


def _mark(sessions: sessionmaker[Session], it: _Item, state: str) -> None:
    with sessions() as session:
        row = session.get(TaskRow, it.task_id)
        row.state, row.started, row.tries = state, queries.now(), row.tries + 1
        session.commit()


def _store(sessions: sessionmaker[Session], it: _Item, execution: Execution) -> None:
    """A task's results and its final state, in one transaction. Another process may add
    the same new check row first (unique check id/version): then the transaction is
    retried and finds it."""
    for attempt in range(3):
        try:
            return _store_once(sessions, it, execution)
        except IntegrityError:
            if attempt == 2:
                raise


def _store_once(sessions: sessionmaker[Session], it: _Item, execution: Execution) -> None:
    with sessions() as session:
        # An infrastructure failure is the task's state, never a column of error cells that a
        # matrix would show: its placeholder results are not stored.
        if not execution.infra_error:
            queries.add_results(session, it.run_id, it.task_id, execution.results)
        row = session.get(TaskRow, it.task_id)
        row.state = "error" if execution.infra_error else "done"
        row.ended, row.timings, row.error = queries.now(), dict(execution.timings), execution.infra_error
        run = session.get(Run, it.run_id)
        if execution.image_digest and run.image.digest != execution.image_digest:
            run.image = queries.image_row(session, it.task.image, execution.image_digest)
        gpus = [g.index for g in it.task.gpus or ()]
        run.meta = {**run.meta, it.task.suite.name: {"probe": execution.meta, "exit_code": execution.exit_code,
                                                     "gpus": gpus}}
        session.commit()


def _finish_runs(sessions: sessionmaker[Session], batch: str) -> None:
    with sessions() as session:
        for run in session.scalars(select(Run).where(Run.batch == batch)).unique():
            states = {t.state for t in run.tasks}
            if states and states <= {"done", "error"}:
                # every task an infrastructure failure: the run is "error" and no matrix shows it
                state = "error" if states == {"error"} else "failed" if "error" in states else "done"
                run.state, run.ended = state, queries.now()
        session.commit()


def summaries(sessions: sessionmaker[Session], batch: str) -> list[RunSummary]:
    """One summary per run of the batch, from what is stored."""
    out = []
    with sessions() as session:
        for run in session.scalars(select(Run).where(Run.batch == batch).order_by(Run.started)).unique():
            s = RunSummary(run_id=run.id, image=run.image.alias, host=run.host.name, digest=run.image.digest)
            last: dict[str, Result] = {}
            for r in queries.run_results(session, run.id):
                if r.check.check_id not in last or r.attempt >= last[r.check.check_id].attempt:
                    last[r.check.check_id] = r
            s.counts.update(r.status for r in last.values())
            for t in run.tasks:
                s.timings[t.suite] = dict(t.timings or {})
                if t.state == "error" and t.error:
                    s.infra_errors.append(t.error)
            out.append(s)
    return out
