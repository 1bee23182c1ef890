"""Resume an interrupted batch: re-queue every task that is not done, delete any
result of such a task (none is expected: a task's results and its ``done`` state
are stored in one transaction), place the tasks on the current hosts and
dispatch them again. Nothing is lost or stored twice."""

from __future__ import annotations

from typing import Callable

from sqlalchemy import delete, select
from sqlalchemy.orm import Session, sessionmaker

from ..catalog.core import Catalog
from ..errors import InputError, ValorchError
from .placement import Need, place
from .dispatch import (DEFAULT_RETRIES, Executor, PlannedRun, Reporter, RunSummary, _Batch, _Item, _req, _run_for,
                        dispatch, expected_duration, suite_checks, summaries)
from ..spec import HostSpec, ImageSpec, SuiteRef, Task
from ..store import queries
from ..store.models import Result, Run, TaskRow


def resume(ref: str, sessions: sessionmaker[Session], catalog: Catalog | None, hosts: tuple[HostSpec, ...],
           executor_for: Callable[[PlannedRun], Executor], reporter: Reporter | None = None,
           retries: int = DEFAULT_RETRIES) -> tuple[str, list[RunSummary]]:
    """Finish the tasks of an interrupted batch (a batch id, or a run id or prefix of it)."""
    with sessions() as session:
        runs = list(session.scalars(select(Run).where(Run.batch == ref)).unique())
        if not runs:
            run = queries.get_run(session, ref)
            if run is None:
                raise InputError(f"no batch or run '{ref}' in the results database",
                                 "valorch results list shows runs and their batches; pass --db if it is elsewhere")
            runs = list(session.scalars(select(Run).where(Run.batch == run.batch)).unique())
        batch = runs[0].batch
        labels = tuple((runs[0].meta or {}).get("_job", {}).get("labels", ()))
        ctx = _Batch(batch, runs[0].job, runs[0].spec_hash, labels)
        todo: list[tuple[Task, int, str, str]] = []
        for run in runs:
            image = _image_of(run, catalog)
            for t in run.tasks:
                if t.state in ("done", "error"):
                    continue
                suite = SuiteRef.model_validate(t.suite_spec)
                host = HostSpec.model_validate(run.host.spec)
                todo.append((Task(image=image, suite=suite, host=host, checks=suite_checks(suite),
                                  cpu_only=run.cpu_only and image.backend != "cpu"), t.id, run.id, run.executor))
        if todo:
            session.execute(delete(Result).where(Result.task_id.in_([tid for _, tid, _, _ in todo])))
            for _, tid, _, _ in todo:
                session.get(TaskRow, tid).state = "queued"
            for run in runs:
                if run.state != "done":
                    run.state = "running"
        session.commit()
    items = [_Item(task, run_id, tid, expected_duration(task)) for task, tid, run_id, _ in todo]
    docker_items = [it for it in items if it.task.image.executor != "host"]
    if docker_items:
        placement = place([Need(str(i), _req(it, ctx), it.expected, label=it.task.image.alias)
                           for i, it in enumerate(docker_items)], hosts)
        by_name = {h.name: h for h in hosts}
        with sessions() as session:
            for i, it in enumerate(docker_items):
                host = by_name[placement.host_of(str(i))]
                if host.name != it.task.host.name or host.fingerprint != it.task.host.fingerprint:
                    it.task = it.task.model_copy(update={"host": host})
                    row = session.get(TaskRow, it.task_id)
                    run = _run_for(session, ctx, it.task, row.run.executor, row.run.cpu_only)
                    row.run_id = it.run_id = run.id
                    session.flush()
            session.commit()
    dispatch(items, ctx, hosts, sessions, executor_for, reporter, retries)
    return batch, summaries(sessions, batch)


def _image_of(run: Run, catalog: Catalog | None) -> ImageSpec:
    if catalog is not None:
        try:
            image = catalog.resolve(run.image.alias)
            if image.reference == run.image.reference:
                return image
        except ValorchError:
            pass
    row = run.image
    return ImageSpec(alias=row.alias, reference=row.reference, backend=row.backend, family=row.family or "cpu",
                     components=dict(row.components or {}), executor="host" if run.executor == "host" else "docker")
