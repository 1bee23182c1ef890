"""What a batch has in flight: its tasks, the free slots of its hosts, the worker
threads running their executors and the queue their executions come back on.

No store here, so that a batch's first wave can start before its rows are written:
``services/batch`` starts it, then loads the recorder, sweeps leftover containers and
writes the batch's rows while those containers run (the container has nothing to wait
for from them). ``dispatch.py`` does the rest with the store: rows, retries, results.
Run ids are random (uuid4), not time-ordered: runs of one minute would share the
8-character prefix users type (docs/benchmarks.md, "Fleet scale").
"""

from __future__ import annotations

import queue
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..errors import ValorchError
from ..executors.base import Executor
from ..executors.transcript import infrastructure_failure
from ..hosts.match import Requirement
from ..spec import GPU, Execution, HostSpec, Task
from .plan import PlannedRun, expected_duration, task_key, task_requirement
from .reporter import SILENT, Reporter

__all__ = ["Flight", "Item", "Launch", "Reporter", "launch_planned"]


@dataclass
class Item:
    """A task of a batch: the run it belongs to, its row (None until the batch's rows are
    written) and where it has been tried."""

    task: Task
    run_id: str
    task_id: int | None
    expected: float
    tried: set[str] = field(default_factory=set)
    # set once its executor has started it (its container runs), or has ended
    started: threading.Event = field(default_factory=threading.Event)


def start_order(items: list[Item]) -> list[Item]:
    """The order tasks wait for slots in: runs (one image on one host) with the most
    expected work first (longest first spreads the long images over the slots), and a
    run's own suites in the job's order (the order they were planned in), so the run
    goes through its suites as the job lists them."""
    work: dict[str, float] = {}
    for it in items:
        work[it.run_id] = work.get(it.run_id, 0.0) + it.expected * it.task.node_count
    first = {id(it): i for i, it in enumerate(items)}
    run_first: dict[str, int] = {}
    for i, it in enumerate(items):
        run_first.setdefault(it.run_id, i)
    return sorted(items, key=lambda it: (-work[it.run_id], run_first[it.run_id], first[id(it)]))


#: (host, the GPUs taken there; () a CPU slot) per node
Held = list[tuple[str, "tuple[GPU, ...] | None"]]


class Pool:
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
        chosen = tuple(sorted(ok, key=lambda g: g.index)[: max(1, req.gpus)])
        for g in chosen:
            del self.gpus[g.index]
        return chosen

    def give(self, gpus: tuple[GPU, ...] | None) -> None:
        if gpus:
            self.gpus.update({g.index: g for g in gpus})
        elif gpus is not None:
            self.cpu += 1


class Flight:
    """The tasks in flight: their threads and executors, so that an interrupted batch
    (Ctrl-C, SIGTERM, a failing database) stops every container before it ends, exactly
    as a normal end removes them."""

    JOIN_S = 60.0  # seconds to wait for the workers once their executors were cancelled

    def __init__(self) -> None:
        self.stopping = threading.Event()
        self.executors: list[tuple[threading.Thread, Any]] = []
        self._lock = threading.Lock()

    def adopt(self, executor: Any) -> bool:
        """Record a worker's executor; False once the batch is stopping (the worker then
        runs nothing, so a thread that had no executor yet needs no waiting for)."""
        with self._lock:
            self.executors.append((threading.current_thread(), executor))
        return not self.stopping.is_set()

    def stop(self) -> None:
        """Cancel every executor that can be (its container is killed and removed) and
        wait for those workers to leave, so that their own clean-up has run (the host
        interpreter's ``cancel`` kills its probe's whole process tree). An executor without
        ``cancel`` is not waited for. Stopping twice is stopping once."""
        self.stopping.set()
        with self._lock:
            adopted, self.executors = list(self.executors), []
        waiting = []
        for thread, executor in adopted:
            cancel = getattr(executor, "cancel", None)
            if cancel is not None:
                cancel()
                waiting.append(thread)
        end = time.monotonic() + self.JOIN_S
        for thread in waiting:
            thread.join(max(0.0, end - time.monotonic()))


def work(
    it: Item,
    task: Task,
    held: Held,
    executor_for: Callable[[PlannedRun], Executor],
    reporter: Reporter,
    done: queue.Queue[tuple[Item, Held, Execution]],
    flight: Flight,
) -> None:
    """A worker thread: run one task with its executor; the execution (a harness failure
    as data) goes to ``done``."""
    try:
        executor = executor_for(PlannedRun(task.image, task.host, (task,)))
        if not flight.adopt(executor):
            return
        execution = executor.execute(
            task,
            it.run_id,
            (lambda r: reporter.result(task, r)) if reporter is not SILENT else None,
            on_started=it.started.set,
        )
    except ValorchError as exc:  # e.g. the engine does not answer
        execution = infrastructure_failure(task, exc.message)
    except Exception as exc:  # noqa: BLE001 - a harness failure is data, never a lost thread
        msg = f"{type(exc).__name__}: {str(exc)[:500]}"
        execution = infrastructure_failure(task, msg)
    finally:
        it.started.set()
    done.put((it, held, execution))


class Launch:
    """A batch's tasks on their hosts' slots: which wait, which run, and the queue their
    executions come back on. ``start_ready`` starts every task that has a free slot.

    The launch owns its lists: others read them (``items``, ``pending``, ``runs``,
    ``running``) and change them only through its methods (``start_ready``,
    ``next_done``, ``requeue``, ``moved``, ``rows_written``, ``stop``)."""

    def __init__(
        self,
        items: list[Item],
        hosts: tuple[HostSpec, ...],
        executor_for: Callable[[PlannedRun], Executor],
        reporter: Reporter | None,
        labels: tuple[str, ...] = (),
        runs: tuple[tuple[PlannedRun, str], ...] = (),
    ) -> None:
        self._items = list(items)
        self._runs = runs  # (planned run, its run id) of a new batch whose rows are not written
        self.pools = {h.name: Pool(h) for h in hosts}
        for it in items:
            for h in (it.task.host, *it.task.nodes):
                self.pools.setdefault(h.name, Pool(h))
        self._pending = start_order(items)
        self.done: queue.Queue[tuple[Item, Held, Execution]] = queue.Queue()
        self.flight = Flight()
        self._running = 0
        self.executor_for, self.labels = executor_for, labels
        self.reporter: Reporter = reporter or SILENT
        for it in self._pending:
            self.reporter.task_queued(it.task, it.expected)

    @property
    def items(self) -> tuple[Item, ...]:
        return tuple(self._items)

    @property
    def pending(self) -> tuple[Item, ...]:
        """The tasks waiting for a slot, in the order they start."""
        return tuple(self._pending)

    @property
    def runs(self) -> tuple[tuple[PlannedRun, str], ...]:
        """(planned run, run id) of a new batch's runs whose rows are not written yet."""
        return self._runs

    @property
    def running(self) -> int:
        return self._running

    def in_flight(self) -> list[Item]:
        """The tasks started and not waiting again."""
        waiting = {id(it) for it in self._pending}
        return [it for it in self._items if id(it) not in waiting]

    def rows_written(self, run_id: str, task_ids: dict[str, int]) -> None:
        """The rows of the run ``run_id`` are written: each of its tasks gets its row (by
        suite), and the run leaves ``runs``."""
        for it in self._items:
            if it.run_id == run_id:
                it.task_id = task_ids[it.task.suite.name]
        self._runs = tuple(r for r in self._runs if r[1] != run_id)

    def requeue(self, it: Item, reason: str) -> None:
        """``it`` waits for a slot again, behind the tasks waiting: an infrastructure error
        (``reason``) moved it to another host (``moved``)."""
        self.reporter.task_retried(it.task, reason)
        self._pending.append(it)

    def moved(self, it: Item, task: Task, run_id: str) -> None:
        """``it`` now runs as ``task`` (on another host), recorded under ``run_id``."""
        it.task, it.run_id = task, run_id

    def stop(self) -> None:
        self.flight.stop()

    def start_ready(self, mark: Callable[[Item], None] | None = None) -> list[Item]:
        """Start every waiting task that a host has a slot for (``mark``: record it as
        running first); the tasks started."""
        started = []
        blocked: set[str] = set()  # hosts a waiting gang task is first in line for
        for it in list(self._pending):
            held = self._take(it, blocked)
            if held is None:
                continue
            self._pending.remove(it)
            gpus = held[0][1]
            task = it.task.model_copy(update={"gpus": gpus or None}) if gpus else it.task
            if it.task.nodes:
                task = task.model_copy(update={"node_gpus": tuple(g or () for _, g in held)})
            if mark is not None:
                mark(it)
            self.reporter.task_started(task)
            threading.Thread(
                target=work,
                args=(it, task, held, self.executor_for, self.reporter, self.done, self.flight),
                name=f"valorch-{task_key(task)}",
                daemon=True,
            ).start()
            self._running += 1
            started.append(it)
        return started

    def _take(self, it: Item, blocked: set[str]) -> Held | None:
        """The slots of every host of ``it``, all at once or none. A multi-node task that
        cannot start yet keeps its hosts for itself: tasks behind it in the queue do not
        start there (so that single-node work cannot starve it), and it holds nothing
        while it waits (so that it cannot starve them of what it does not use)."""
        names = [h.name for h in it.task.nodes] or [it.task.host.name]
        if blocked.intersection(names):
            return None
        req = task_requirement(it.task, self.labels)
        held: Held = []
        for name in names:
            got = self.pools[name].take(req)
            if got is None:
                for back, gpus in held:
                    self.pools[back].give(gpus)
                if len(names) > 1:
                    blocked.update(names)
                return None
            held.append((name, got))
        return held

    @staticmethod
    def wait_started(items: list[Item], timeout: float = 30.0) -> None:
        """Until these tasks' executors have started them (or ended): what the caller does
        next then does not compete with their set-up for the interpreter."""
        end = time.monotonic() + timeout
        for it in items:
            it.started.wait(max(0.0, end - time.monotonic()))

    def next_done(self) -> tuple[Item, Execution]:
        """The next execution to come back; its slots are free again."""
        it, held, execution = self.done.get()
        self._running -= 1
        for name, gpus in held:
            self.pools[name].give(gpus)
        it.tried.add(it.task.host.name)
        return it, execution


def launch_planned(
    planned: tuple[PlannedRun, ...],
    executor_for: Callable[[PlannedRun], Executor],
    reporter: Reporter | None,
    hosts: tuple[HostSpec, ...] | None = None,
    history: dict[tuple[str, str], float] | None = None,
    labels: tuple[str, ...] = (),
) -> Launch:
    """A new batch's launch: one run id per planned run, given here (its rows are written
    with it), nothing started yet."""
    runs = tuple((pr, str(uuid.uuid4())) for pr in planned)
    items = [
        Item(t, run_id, None, expected_duration(t, history))
        for pr, run_id in runs
        for t in pr.tasks
    ]
    all_hosts = tuple(hosts or ()) or tuple({pr.host.name: pr.host for pr in planned}.values())
    return Launch(items, all_hosts, executor_for, reporter, labels, runs)
