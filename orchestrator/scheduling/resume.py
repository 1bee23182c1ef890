"""Resume an interrupted batch: re-queue every task that did not end with a verdict
(interrupted, or stopped by an infrastructure error such as an engine outage),
place the tasks on the current hosts and dispatch them again. A task's results
and its ``done`` state are recorded together (``Recorder.complete``), so nothing is
lost or stored twice."""

from __future__ import annotations

from collections.abc import Callable

from ..catalog.core import Catalog
from ..errors import InputError, ValorchError
from ..executors.base import Executor
from ..spec import BatchInfo, HostSpec, ImageSpec, Task
from .dispatch import DEFAULT_RETRIES, dispatch, row_of
from .flight import Item, Launch
from .placement import Need, place
from .plan import PlannedRun, expected_duration, suite_checks, task_nodes, task_requirement
from .recorder import Recorder
from .reporter import Reporter


def resume(
    ref: str,
    recorder: Recorder,
    catalog: Catalog | None,
    hosts: tuple[HostSpec, ...],
    executor_for: Callable[[PlannedRun], Executor],
    reporter: Reporter | None = None,
    retries: int = DEFAULT_RETRIES,
) -> str:
    """Finish the tasks of an interrupted batch (a batch id, or a run id or prefix of it);
    the batch id."""
    reopened = recorder.reopen(ref, lambda stored: _image_of(stored, catalog), suite_checks)
    if reopened is None:
        raise InputError(
            f"no batch or run '{ref}' in the results database",
            "valorch results list shows runs and their batches; pass --db if it is elsewhere",
        )
    ctx, todo = reopened
    items = [Item(p.task, p.run_id, p.task_id, expected_duration(p.task)) for p in todo]
    _replace(ctx, [it for it in items if it.task.image.executor != "host"], hosts, recorder)
    dispatch(
        Launch(items, hosts, executor_for, reporter, ctx.labels), ctx, recorder, retries, hosts
    )
    return ctx.batch


def _replace(
    ctx: BatchInfo, items: list[Item], hosts: tuple[HostSpec, ...], recorder: Recorder
) -> None:
    """Place the container tasks on the current hosts; those whose host changed (another
    host, or the same name with another fingerprint) move there, all in one transaction."""
    if not items:
        return
    placement = place(
        [
            Need(
                str(i),
                task_requirement(it.task, ctx.labels),
                it.expected,
                label=it.task.image.alias,
                nodes=task_nodes(it.task.suite, it.task.checks),
            )
            for i, it in enumerate(items)
        ],
        hosts,
    )
    by_name = {h.name: h for h in hosts}
    moved: list[Item] = []
    for i, it in enumerate(items):
        gang = placement.by_key[str(i)].hosts
        if gang:  # a multi-node task: all of its nodes again
            it.task = it.task.model_copy(update={"nodes": tuple(by_name[h] for h in gang)})
        host = by_name[placement.host_of(str(i))]
        if host.name != it.task.host.name or host.fingerprint != it.task.host.fingerprint:
            it.task = it.task.model_copy(update={"host": host})
            moved.append(it)
    if moved:
        moves: list[tuple[int, Task]] = [(row_of(it), it.task) for it in moved]
        for it, run_id in zip(moved, recorder.move(ctx, moves), strict=True):
            it.run_id = run_id


def _image_of(stored: ImageSpec, catalog: Catalog | None) -> ImageSpec:
    """The catalog's image where it still names the stored reference (its pins, its
    workloads), else the image as the run stored it."""
    if catalog is not None:
        try:
            image = catalog.resolve(stored.alias)
            if image.reference == stored.reference:
                return image
        except ValorchError:
            pass
    return stored
