"""Resume an interrupted batch: re-queue every task that did not end with a verdict
(interrupted, or stopped by an infrastructure error such as an engine outage),
place the tasks on the current hosts and dispatch them again. A task's results
and its ``done`` state are stored in one transaction, so nothing is lost or
stored twice."""

from __future__ import annotations

from collections.abc import Callable

from sqlalchemy.orm import Session, sessionmaker

from ..catalog.core import Catalog
from ..errors import InputError, ValorchError
from ..spec import HostSpec, ImageSpec
from ..store import queue as tq
from ..store import spill
from ..store.models import Run
from .dispatch import DEFAULT_RETRIES, Executor, Item, Launch, Reporter, RunSummary, dispatch
from .flight import requirement_of
from .placement import Need, place
from .plan import PlannedRun, expected_duration, suite_checks, task_nodes


def resume(
    ref: str,
    sessions: sessionmaker[Session],
    catalog: Catalog | None,
    hosts: tuple[HostSpec, ...],
    executor_for: Callable[[PlannedRun], Executor],
    reporter: Reporter | None = None,
    retries: int = DEFAULT_RETRIES,
) -> tuple[str, list[RunSummary]]:
    """Finish the tasks of an interrupted batch (a batch id, or a run id or prefix of it)."""
    with sessions() as session:
        runs = tq.batch_of(session, ref)
        if not runs:
            raise InputError(
                f"no batch or run '{ref}' in the results database",
                "valorch results list shows runs and their batches; pass --db if it is elsewhere",
            )
        ctx = tq.batch_info(runs[0])
        url = sessions.kw["bind"].url
        spilled = spill.recover(
            session, url, ctx.batch, tq.complete
        )  # results a full disk kept out
        session.commit()
        for path in spilled:
            path.unlink(missing_ok=True)
        session.expire_all()
        runs = tq.batch_of(session, ctx.batch)
        todo = tq.reopen(session, runs, lambda run: _image_of(run, catalog), suite_checks)
        session.commit()
    items = [Item(p.task, p.run_id, p.task_id, expected_duration(p.task)) for p in todo]
    docker_items = [it for it in items if it.task.image.executor != "host"]
    if docker_items:
        placement = place(
            [
                Need(
                    str(i),
                    requirement_of(it, ctx.labels),
                    it.expected,
                    label=it.task.image.alias,
                    nodes=task_nodes(it.task.suite, it.task.checks),
                )
                for i, it in enumerate(docker_items)
            ],
            hosts,
        )
        by_name = {h.name: h for h in hosts}
        with sessions() as session:
            for i, it in enumerate(docker_items):
                gang = placement.by_key[str(i)].hosts
                if gang:  # a multi-node task: all of its nodes again
                    it.task = it.task.model_copy(update={"nodes": tuple(by_name[h] for h in gang)})
                host = by_name[placement.host_of(str(i))]
                if host.name != it.task.host.name or host.fingerprint != it.task.host.fingerprint:
                    it.task = it.task.model_copy(update={"host": host})
                    it.run_id = tq.move(session, ctx, it.task_id, it.task)
            session.commit()
    dispatch(
        Launch(items, hosts, executor_for, reporter, ctx.labels), ctx, sessions, retries, hosts
    )
    with sessions() as session:
        return ctx.batch, tq.summaries(session, ctx.batch)


def _image_of(run: Run, catalog: Catalog | None) -> ImageSpec:
    if catalog is not None:
        try:
            image = catalog.resolve(run.image.alias)
            if image.reference == run.image.reference:
                return image
        except ValorchError:
            pass
    row = run.image
    return ImageSpec(
        alias=row.alias,
        reference=row.reference,
        backend=row.backend,
        family=row.family or "cpu",
        components=dict(row.components or {}),
        executor="host" if run.executor == "host" else "docker",
    )
