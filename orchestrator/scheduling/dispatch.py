"""Dispatch: queued tasks → concurrent execution on their hosts → retries.

- ``execute`` queues every planned task (its ``Recorder``), then ``dispatch`` runs
  them concurrently: one per GPU on GPU hosts (each task pinned to its own GPUs),
  ``host.slots`` CPU tasks per host. Threads are enough: the work happens in
  containers (``flight.py``: slots, worker threads, what is in flight). A new batch's
  first wave may already be running when ``execute`` gets it (``services/batch``
  starts it before the batch's rows are written): its rows are written first thing here,
  with the run ids its items carry, and its tasks marked running.
- An infrastructure error (engine unreachable, container start failure, image
  missing, host lost) is retried on another matching host, up to ``retries``
  times; its error results are not stored. Validation failures are never
  retried here (suite ``attempts`` handle flakiness).
- A task's results and its ``done`` state are recorded together (``Recorder.complete``:
  one transaction), so an interrupted task has no results (``resume`` re-runs it whole).
- No database here: every row goes through the recorder (``recorder.py``).
"""

from __future__ import annotations

import queue
import uuid

from ..errors import NoMatchingHostError
from ..spec import BatchInfo, Execution, HostSpec, JobSpec
from .flight import Item, Launch
from .placement import Need, place
from .plan import task_requirement
from .recorder import Recorder

DEFAULT_RETRIES = 2


def execute(
    launch: Launch,
    job: JobSpec,
    recorder: Recorder,
    batch: str | None = None,
    hosts: tuple[HostSpec, ...] | None = None,
    retries: int = DEFAULT_RETRIES,
) -> str:
    """Queue every task of a new batch, then run them concurrently on their hosts; the batch
    id. ``launch``: the batch as ``flight.launch_planned`` made it, its first wave possibly
    started already (its rows are written now)."""
    ctx = BatchInfo(batch or str(uuid.uuid4()), job.name, job.spec_hash, job.labels)
    dispatch(launch, ctx, recorder, retries, hosts)
    return ctx.batch


def write_rows(launch: Launch, ctx: BatchInfo, recorder: Recorder) -> None:
    """A new batch's rows: a run per planned run, with the id its items carry, and a queued task per
    suite; the tasks already in flight are marked running. Each run written leaves ``launch.runs``,
    so that writing again after a failure goes on where it stopped."""
    for pr, run_id in launch.runs:
        launch.rows_written(run_id, recorder.enqueue(ctx, pr, launch.executor_for(pr).name, run_id))
    flying = [row_of(it) for it in launch.in_flight()]
    if flying:
        recorder.start(flying)


def dispatch(
    launch: Launch,
    ctx: BatchInfo,
    recorder: Recorder,
    retries: int,
    hosts: tuple[HostSpec, ...] | None = None,
) -> None:
    """Run the launch's tasks to the end: rows first for a new batch (``launch.runs``), then
    each task as a slot frees up; an infrastructure error moves a task to another host."""
    hosts = tuple(hosts or ()) or tuple(p.host for p in launch.pools.values())

    def mark(it: Item) -> None:
        recorder.start([row_of(it)])

    try:
        if launch.runs:
            write_rows(launch, ctx, recorder)
        while launch.pending or launch.running:
            launch.start_ready(mark)
            if not launch.running:
                break
            it, execution = launch.next_done()
            if (
                execution.infra_error
                and len(it.tried) <= retries
                and _move(it, ctx, hosts, launch, recorder, execution.infra_error)
            ):
                launch.requeue(it, execution.infra_error)
                continue
            recorder.complete(ctx.batch, it.run_id, row_of(it), it.task, execution)
            launch.reporter.task_finished(it.task, execution)
    except BaseException as exc:
        abandon(launch, ctx, recorder, exc)
        raise
    recorder.finish(ctx.batch)


def abandon(launch: Launch, ctx: BatchInfo, recorder: Recorder, exc: BaseException) -> None:
    """A batch stopped (Ctrl-C, SIGTERM, a database error): no container outlives it, and its runs
    are ``interrupted`` for ``--resume``, their rows written first when they were not yet."""
    launch.stop()
    recorder.salvage(ctx.batch, _finished_meanwhile(launch), exc)
    if launch.runs:  # stopped before its rows were written: written now, so that --resume finds it
        try:
            write_rows(launch, ctx, recorder)
        except Exception:  # noqa: BLE001 - the store may be what failed: the original error is the news
            return
    recorder.interrupt({it.run_id for it in launch.items})


def _move(
    it: Item,
    ctx: BatchInfo,
    hosts: tuple[HostSpec, ...],
    launch: Launch,
    recorder: Recorder,
    reason: str = "",
) -> bool:
    """Re-place ``it`` on a matching host it has not tried; False when there is none."""
    # a gang is not moved: its error names the node
    if it.task.image.executor == "host" or it.task.nodes:
        return False
    pools = launch.pools
    load = {
        h: sum(p.expected for p in launch.pending if p.task.host.name == h)
        / max(1, pools[h].host.slots)
        for h in pools
    }
    need = Need("retry", task_requirement(it.task, ctx.labels), it.expected, frozenset(it.tried))
    try:
        a = place([need], hosts, busy=load).assignments[0]
    except NoMatchingHostError:
        return False
    if a.host in it.tried:
        return False
    task = it.task.model_copy(update={"host": pools[a.host].host})
    (run_id,) = recorder.move(ctx, [(row_of(it), task)], reason)
    launch.moved(it, task, run_id)
    return True


def row_of(it: Item) -> int:
    """The task's row; every item has one once the batch's rows are written."""
    if it.task_id is None:
        raise RuntimeError(f"task {it.task.suite.name} of run {it.run_id} has no row yet")
    return it.task_id


def _finished_meanwhile(launch: Launch) -> list[tuple[Item, Execution]]:
    """Executions that finished while the batch stopped (their containers ended on their
    own), of tasks whose rows exist; the infrastructure failures of the stop are not."""
    out: list[tuple[Item, Execution]] = []
    while True:
        try:
            it, _gpus, execution = launch.done.get_nowait()
        except queue.Empty:
            return out
        if not execution.infra_error and it.task_id is not None:  # None: rows never written
            out.append((it, execution))
