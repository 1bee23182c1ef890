"""Dispatch: queued tasks (DB) → concurrent execution on their hosts → retries.

- ``execute`` queues every planned task (``store.queue``), then ``dispatch`` runs
  them concurrently: one per GPU on GPU hosts (each task pinned to its own GPUs),
  ``host.slots`` CPU tasks per host. Threads are enough: the work happens in
  containers.
- An infrastructure error (engine unreachable, container start failure, image
  missing, host lost) is retried on another matching host, up to ``retries``
  times; its error results are not stored. Validation failures are never
  retried here (suite ``attempts`` handle flakiness).
- A task's results and its ``done`` state are stored in one transaction, so an
  interrupted task has no results (``resume`` re-runs it whole).
"""

from __future__ import annotations

import queue
import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol

from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from ..errors import NoMatchingHostError, ValorchError
from ..executors.base import Executor
from ..executors.transcript import infrastructure_failure
from ..hosts.match import Requirement
from ..spec import GPU, CheckResult, Execution, HostSpec, JobSpec, Task
from ..store import queue as tq
from ..store import spill
from ..store.full import StorageFull
from ..store.queue import BatchInfo, RunSummary
from .placement import Need, place
from .plan import PlannedRun, expected_duration, requirement, task_key

DEFAULT_RETRIES = 2

__all__ = ["DEFAULT_RETRIES", "Executor", "Item", "Reporter", "RunSummary", "dispatch", "execute"]


class Reporter(Protocol):
    def task_started(self, task: Task) -> None: ...

    def result(self, task: Task, result: CheckResult) -> None: ...

    def task_finished(self, task: Task, execution: Execution) -> None: ...


@dataclass
class Item:
    """A queued task in flight: where it is stored and where it has been tried."""

    task: Task
    run_id: str
    task_id: int
    expected: float
    tried: set[str] = field(default_factory=set)


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
        ok = [g for g in self.gpus.values() if req.accepts(g)]
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


def requirement_of(item: Item, ctx: BatchInfo) -> Requirement:
    return requirement(item.task.image, ctx.labels, item.task.cpu_only)


def execute(planned: tuple[PlannedRun, ...], job: JobSpec, sessions: sessionmaker[Session],
            executor_for: Callable[[PlannedRun], Executor], reporter: Reporter | None = None,
            batch: str | None = None, hosts: tuple[HostSpec, ...] | None = None,
            retries: int = DEFAULT_RETRIES, history: dict[tuple[str, str], float] | None = None
            ) -> list[RunSummary]:
    """Queue every planned task in the DB, then run them concurrently on their hosts."""
    ctx = BatchInfo(batch or str(uuid.uuid4()), job.name, job.spec_hash, job.labels)
    items: list[Item] = []
    for pr in planned:
        with sessions() as session:
            run_id, ids = tq.enqueue(session, ctx, pr.image, pr.host, executor_for(pr).name,
                                     any(t.cpu_only for t in pr.tasks), [t.suite for t in pr.tasks])
            session.commit()
        items += [Item(t, run_id, ids[t.suite.name], expected_duration(t, history)) for t in pr.tasks]
    all_hosts = tuple(hosts or ()) or tuple({pr.host.name: pr.host for pr in planned}.values())
    dispatch(items, ctx, all_hosts, sessions, executor_for, reporter, retries)
    with sessions() as session:
        return tq.summaries(session, ctx.batch)


def dispatch(items: list[Item], ctx: BatchInfo, hosts: tuple[HostSpec, ...], sessions: sessionmaker[Session],
             executor_for: Callable[[PlannedRun], Executor], reporter: Reporter | None, retries: int) -> None:
    pools = {h.name: _Pool(h) for h in hosts}
    for it in items:
        pools.setdefault(it.task.host.name, _Pool(it.task.host))
    pending = sorted(items, key=lambda it: -it.expected)
    done: queue.Queue[tuple[Item, tuple[GPU, ...] | None, Execution]] = queue.Queue()
    flight = _Flight()
    running = 0
    for it in pending:
        _hook(reporter, "task_queued", it.task, it.expected)
    try:
        while pending or running:
            for it in list(pending):
                gpus = pools[it.task.host.name].take(requirement_of(it, ctx))
                if gpus is None:
                    continue
                pending.remove(it)
                task = it.task.model_copy(update={"gpus": gpus or None}) if gpus else it.task
                with sessions() as session:
                    tq.start(session, it.task_id)
                    session.commit()
                if reporter:
                    reporter.task_started(task)
                flight.start(threading.Thread(target=_work, args=(it, task, gpus, executor_for, reporter, done, flight),
                                              name=f"valorch-{task_key(task)}", daemon=True))
                running += 1
            if not running:
                break
            it, gpus, execution = done.get()
            running -= 1
            pools[it.task.host.name].give(gpus)
            it.tried.add(it.task.host.name)
            if execution.infra_error and len(it.tried) <= retries:
                if _move(it, ctx, hosts, pools, pending, sessions, execution.infra_error):
                    _hook(reporter, "task_retried", it.task, execution.infra_error)
                    pending.append(it)
                    continue
            _store(sessions, it, execution, ctx.batch)
            if reporter:
                reporter.task_finished(it.task, execution)
    except BaseException as exc:
        flight.stop()  # Ctrl-C, SIGTERM, a database error: no container outlives the batch
        if isinstance(exc, StorageFull):  # what was measured meanwhile waits for --resume too
            _spill_finished(sessions, ctx, done, exc)
        try:
            with sessions() as session:
                tq.interrupt(session, (it.run_id for it in items))
                session.commit()
        except StorageFull:
            pass  # the runs stay "running"; --resume re-queues every task not done
        raise
    with sessions() as session:
        tq.finish(session, ctx.batch)
        session.commit()


def _hook(reporter: Any, name: str, *args: Any) -> None:
    fn = getattr(reporter, name, None)
    if fn is not None:
        fn(*args)


class _Flight:
    """The tasks in flight: their threads and executors, so that an interrupted batch
    (Ctrl-C, SIGTERM, a failing database) stops every container before it ends, exactly
    as a normal end removes them."""

    JOIN_S = 60.0  # seconds to wait for the workers once their executors were cancelled

    def __init__(self) -> None:
        self.stopping = threading.Event()
        self.threads: list[threading.Thread] = []
        self.executors: list[tuple[threading.Thread, Any]] = []
        self._lock = threading.Lock()

    def start(self, thread: threading.Thread) -> None:
        self.threads.append(thread)
        thread.start()

    def adopt(self, executor: Any) -> bool:
        """Record a worker's executor; False once the batch is stopping (the worker then
        runs nothing, so a thread that had no executor yet needs no waiting for)."""
        with self._lock:
            self.executors.append((threading.current_thread(), executor))
        return not self.stopping.is_set()

    def stop(self) -> None:
        """Cancel every executor that can be (its container is killed and removed) and
        wait for those workers to leave, so that their own clean-up has run. An executor
        without ``cancel`` (the host interpreter) is not waited for."""
        self.stopping.set()
        with self._lock:
            adopted = list(self.executors)
        waiting = []
        for thread, executor in adopted:
            cancel = getattr(executor, "cancel", None)
            if cancel is not None:
                cancel()
                waiting.append(thread)
        end = time.monotonic() + self.JOIN_S
        for thread in waiting:
            thread.join(max(0.0, end - time.monotonic()))


def _work(it: Item, task: Task, gpus: tuple[GPU, ...] | None, executor_for: Callable[[PlannedRun], Executor],
          reporter: Reporter | None, done: queue.Queue, flight: _Flight | None = None) -> None:
    try:
        executor = executor_for(PlannedRun(task.image, task.host, (task,)))
        if flight is not None and not flight.adopt(executor):
            return
        execution = executor.execute(task, it.run_id, (lambda r: reporter.result(task, r)) if reporter else None)
    except ValorchError as exc:  # e.g. the engine does not answer
        execution = infrastructure_failure(task, exc.message)
    except Exception as exc:  # noqa: BLE001 - a harness failure is data, never a lost thread
        msg = f"{type(exc).__name__}: {str(exc)[:500]}"
        execution = infrastructure_failure(task, msg)
    done.put((it, gpus, execution))


def _move(it: Item, ctx: BatchInfo, hosts: tuple[HostSpec, ...], pools: dict[str, _Pool], pending: list[Item],
          sessions: sessionmaker[Session], reason: str = "") -> bool:
    """Re-place ``it`` on a matching host it has not tried; False when there is none."""
    if it.task.image.executor == "host":
        return False
    load = {h: sum(p.expected for p in pending if p.task.host.name == h) / max(1, pools[h].host.slots)
            for h in pools}
    try:
        a = place([Need("retry", requirement_of(it, ctx), it.expected, frozenset(it.tried))], hosts,
                  busy=load).assignments[0]
    except NoMatchingHostError:
        return False
    if a.host in it.tried:
        return False
    it.task = it.task.model_copy(update={"host": pools[a.host].host})
    with sessions() as session:
        it.run_id = tq.move(session, ctx, it.task_id, it.task, reason)
        session.commit()
    return True


def _store(sessions: sessionmaker[Session], it: Item, execution: Execution, batch: str = "") -> None:
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


def _spill(sessions: sessionmaker[Session], batch: str, it: Item, execution: Execution, exc: StorageFull) -> None:
    url = sessions.kw["bind"].url
    try:
        path = spill.write(url, batch, it.run_id, it.task_id, it.task, execution)
    except OSError as err:
        exc.message += f"; the results of {task_key(it.task)} could not be spilled either ({err.strerror})"
        return
    exc.spill = path.parent
    if "spilled to" not in exc.message:
        exc.message += f"; the results measured so far are spilled to {path.parent} for --resume"


def _spill_finished(sessions: sessionmaker[Session], ctx: BatchInfo, done: queue.Queue, exc: StorageFull) -> None:
    """Executions that finished while the batch stopped (their containers ended on their own)."""
    while True:
        try:
            it, _gpus, execution = done.get_nowait()
        except queue.Empty:
            return
        if not execution.infra_error:
            _spill(sessions, ctx.batch, it, execution, exc)
