"""Dispatch: queued tasks (DB) → concurrent execution on their hosts → retries.

- ``execute`` queues every planned task (``store.queue``), then ``dispatch`` runs
  them concurrently: one per GPU on GPU hosts (each task pinned to its own GPUs),
  ``host.slots`` CPU tasks per host. Threads are enough: the work happens in
  containers (``flight.py``: slots, worker threads, what is in flight). A new batch's
  first wave may already be running when ``execute`` gets it (``services/run``
  starts it before the store is opened): its rows are written first thing here,
  with the run ids its items carry, and its tasks marked running.
- An infrastructure error (engine unreachable, container start failure, image
  missing, host lost) is retried on another matching host, up to ``retries``
  times; its error results are not stored. Validation failures are never
  retried here (suite ``attempts`` handle flakiness).
- A task's results and its ``done`` state are stored in one transaction, so an
  interrupted task has no results (``resume`` re-runs it whole).
"""

from __future__ import annotations

import queue
import uuid
from collections.abc import Callable

from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from ..errors import NoMatchingHostError
from ..executors.base import Executor
from ..spec import Execution, HostSpec, JobSpec
from ..store import queue as tq
from ..store import spill
from ..store.full import StorageFull
from ..store.queue import BatchInfo, RunSummary
from .flight import Item, Launch, Reporter, hook, launch_planned, requirement_of
from .placement import Need, place
from .plan import PlannedRun, task_key

DEFAULT_RETRIES = 2

__all__ = [
    "DEFAULT_RETRIES",
    "Executor",
    "Item",
    "Launch",
    "Reporter",
    "RunSummary",
    "dispatch",
    "execute",
]


def execute(
    planned: tuple[PlannedRun, ...],
    job: JobSpec,
    sessions: sessionmaker[Session],
    executor_for: Callable[[PlannedRun], Executor],
    reporter: Reporter | None = None,
    batch: str | None = None,
    hosts: tuple[HostSpec, ...] | None = None,
    retries: int = DEFAULT_RETRIES,
    history: dict[tuple[str, str], float] | None = None,
    launch: Launch | None = None,
) -> list[RunSummary]:
    """Queue every planned task in the DB, then run them concurrently on their hosts.
    ``launch``: the batch as ``flight.launch_planned`` made it, its first wave possibly
    started already (its rows are written now)."""
    ctx = BatchInfo(batch or str(uuid.uuid4()), job.name, job.spec_hash, job.labels)
    if launch is None:
        launch = launch_planned(planned, executor_for, reporter, hosts, history, job.labels)
    dispatch(launch, ctx, sessions, retries, hosts)
    with sessions() as session:
        return tq.summaries(session, ctx.batch)


def write_rows(launch: Launch, ctx: BatchInfo, sessions: sessionmaker[Session]) -> None:
    """A new batch's rows: a run per planned run, with the id its items carry, and a
    queued task per suite; the tasks already in flight are marked running. Each run
    written leaves ``launch.runs``, so that writing again after a failure goes on
    where it stopped."""
    while launch.runs:
        pr, run_id = launch.runs[0]
        with sessions() as session:
            _, ids = tq.enqueue(
                session,
                ctx,
                pr.image,
                pr.host,
                launch.executor_for(pr).name,
                any(t.cpu_only for t in pr.tasks),
                [t.suite for t in pr.tasks],
                run_id=run_id,
            )
            session.commit()
        for it in launch.items:
            if it.run_id == run_id:
                it.task_id = ids[it.task.suite.name]
        launch.runs = launch.runs[1:]
    waiting = {id(it) for it in launch.pending}
    flying = [it for it in launch.items if id(it) not in waiting]
    if flying:
        with sessions() as session:
            for it in flying:
                tq.start(session, it.task_id)
            session.commit()


def dispatch(
    launch: Launch,
    ctx: BatchInfo,
    sessions: sessionmaker[Session],
    retries: int,
    hosts: tuple[HostSpec, ...] | None = None,
) -> None:
    """Run the launch's tasks to the end: rows first for a new batch (``launch.runs``), then
    each task as a slot frees up; an infrastructure error moves a task to another host."""
    hosts = tuple(hosts or ()) or tuple(p.host for p in launch.pools.values())

    def mark(it: Item) -> None:
        with sessions() as session:
            tq.start(session, it.task_id)
            session.commit()

    try:
        if launch.runs:
            write_rows(launch, ctx, sessions)
        while launch.pending or launch.running:
            launch.start_ready(mark)
            if not launch.running:
                break
            it, execution = launch.next_done()
            if execution.infra_error and len(it.tried) <= retries:
                if _move(it, ctx, hosts, launch, sessions, execution.infra_error):
                    hook(launch.reporter, "task_retried", it.task, execution.infra_error)
                    launch.pending.append(it)
                    continue
            _store(sessions, it, execution, ctx.batch)
            if launch.reporter:
                launch.reporter.task_finished(it.task, execution)
    except BaseException as exc:
        abandon(launch, ctx, sessions, exc)
        raise
    with sessions() as session:
        tq.finish(session, ctx.batch)
        session.commit()


def abandon(
    launch: Launch, ctx: BatchInfo, sessions: sessionmaker[Session], exc: BaseException
) -> None:
    """A batch stopped (Ctrl-C, SIGTERM, a database error): no container outlives it, and
    its runs are ``interrupted`` for ``--resume``, their rows written first when they were
    not yet."""
    launch.flight.stop()
    if isinstance(exc, StorageFull):  # what was measured meanwhile waits for --resume too
        _spill_finished(sessions, ctx, launch, exc)
    if launch.runs:  # stopped before its rows were written: written now, so that --resume finds it
        try:
            write_rows(launch, ctx, sessions)
        except Exception:  # noqa: BLE001 - the store may be what failed: the original error is the news
            return
    try:
        with sessions() as session:
            tq.interrupt(session, {it.run_id for it in launch.items})
            session.commit()
    except StorageFull:
        pass  # the runs stay "running"; --resume re-queues every task not done


def _move(
    it: Item,
    ctx: BatchInfo,
    hosts: tuple[HostSpec, ...],
    launch: Launch,
    sessions: sessionmaker[Session],
    reason: str = "",
) -> bool:
    """Re-place ``it`` on a matching host it has not tried; False when there is none."""
    if (
        it.task.image.executor == "host" or it.task.nodes
    ):  # a gang is not moved: its error names the node
        return False
    pools = launch.pools
    load = {
        h: sum(p.expected for p in launch.pending if p.task.host.name == h)
        / max(1, pools[h].host.slots)
        for h in pools
    }
    try:
        a = place(
            [Need("retry", requirement_of(it, ctx.labels), it.expected, frozenset(it.tried))],
            hosts,
            busy=load,
        ).assignments[0]
    except NoMatchingHostError:
        return False
    if a.host in it.tried:
        return False
    it.task = it.task.model_copy(update={"host": pools[a.host].host})
    with sessions() as session:
        it.run_id = tq.move(session, ctx, it.task_id, it.task, reason)
        session.commit()
    return True


def _store(
    sessions: sessionmaker[Session], it: Item, execution: Execution, batch: str = ""
) -> None:
    """A task's results and its final state, in one transaction. Another process may add
    the same new check row first (unique check id/version): then the transaction is
    retried and finds it. A full disk spills them (``store.spill``) and stops the batch."""
    for attempt in range(3):
        try:
            with sessions() as session:
                tq.complete(session, it.run_id, it.task_id, it.task, execution)
                session.commit()
            return
        except IntegrityError:
            if attempt == 2:
                raise
        except StorageFull as exc:
            _spill(sessions, batch, it, execution, exc)
            raise


def _spill(
    sessions: sessionmaker[Session], batch: str, it: Item, execution: Execution, exc: StorageFull
) -> None:
    url = sessions.kw["bind"].url
    try:
        path = spill.write(url, batch, it.run_id, it.task_id, it.task, execution)
    except OSError as err:
        exc.message += (
            f"; the results of {task_key(it.task)} could not be spilled either ({err.strerror})"
        )
        return
    exc.spill = path.parent
    if "spilled to" not in exc.message:
        exc.message += f"; the results measured so far are spilled to {path.parent} for --resume"


def _spill_finished(
    sessions: sessionmaker[Session], ctx: BatchInfo, launch: Launch, exc: StorageFull
) -> None:
    """Executions that finished while the batch stopped (their containers ended on their own)."""
    while True:
        try:
            it, _gpus, execution = launch.done.get_nowait()
        except queue.Empty:
            return
        if (
            not execution.infra_error and it.task_id is not None
        ):  # None: its rows were never written
            _spill(sessions, ctx.batch, it, execution, exc)
