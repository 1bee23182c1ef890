"""Plan (job × images × hosts) → tasks → dispatch → store.

This is the walking skeleton's scheduler: one host (the local one), tasks run
in order, each result stored as it arrives so an interruption loses nothing
already reported.
"""

from __future__ import annotations

import uuid
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable, Protocol

from sqlalchemy.orm import Session, sessionmaker

from .catalog import Catalog
from .hosts import Requirement, match
from .probe.registry import select as select_checks
from .spec import CheckInfo, CheckResult, Execution, HostSpec, ImageSpec, JobSpec, SuiteRef, Task
from .store import queries


@dataclass(frozen=True)
class PlannedRun:
    image: ImageSpec
    host: HostSpec
    tasks: tuple[Task, ...]


def suite_checks(suite: SuiteRef) -> tuple[CheckInfo, ...]:
    _, checks = select_checks(suite.name, suite.checks)
    return tuple(CheckInfo.model_validate({k: v for k, v in c.info().items()}) for c in checks)


def plan(job: JobSpec, catalog: Catalog, hosts: tuple[HostSpec, ...], local: HostSpec,
         cpu_only: bool = False) -> tuple[PlannedRun, ...]:
    """Every image of the job on a host that matches it; raises NoMatchingHostError
    (exit 3) before anything runs when an image has nowhere to go."""
    runs = []
    for image in catalog.select(job.images):
        if image.executor == "host":
            host = local
        else:
            req = Requirement.of(image, labels=job.labels)
            if cpu_only:
                req = Requirement(backend="cpu", labels=job.labels)
            host = match(req, hosts, image.alias)[0]
        tasks = tuple(Task(image=image, suite=s, host=host, checks=suite_checks(s),
                           cpu_only=cpu_only and image.backend != "cpu") for s in job.suites)
        runs.append(PlannedRun(image, host, tasks))
    return tuple(runs)


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


def execute(planned: tuple[PlannedRun, ...], job: JobSpec, sessions: sessionmaker[Session],
            executor_for: Callable[[PlannedRun], Executor], reporter: Reporter | None = None,
            batch: str | None = None) -> list[RunSummary]:
    batch = batch or str(uuid.uuid4())
    summaries = []
    for pr in planned:
        executor = executor_for(pr)
        with sessions() as session:
            run = queries.start_run(session, batch=batch, job=job.name, image=pr.image, digest=None,
                                    host=pr.host, executor=executor.name, spec_hash=job.spec_hash,
                                    cpu_only=any(t.cpu_only for t in pr.tasks), suites=[t.suite for t in pr.tasks])
            run_id = run.id
            task_ids = {t.suite: t.id for t in run.tasks}
            session.commit()
        summary = RunSummary(run_id=run_id, image=pr.image.alias, host=pr.host.name)
        summaries.append(summary)
        state = "done"
        try:
            for task in pr.tasks:
                state = _one_task(task, run_id, task_ids[task.suite.name], executor, sessions, reporter,
                                  summary) or state
        except BaseException:
            _finish_run(sessions, run_id, "interrupted", summary)
            raise
        _finish_run(sessions, run_id, state, summary)
    return summaries


def _one_task(task: Task, run_id: str, task_id: int, executor: Executor, sessions: sessionmaker[Session],
              reporter: Reporter | None, summary: RunSummary) -> str | None:
    with sessions() as session:
        row = session.get(queries.TaskRow, task_id)
        row.state, row.started, row.tries = "running", queries.now(), row.tries + 1
        session.commit()
    if reporter:
        reporter.task_started(task)

    def on_result(res: CheckResult) -> None:
        if reporter:
            reporter.result(task, res)

    execution = executor.execute(task, run_id, on_result)
    with sessions() as session:
        queries.add_results(session, run_id, task_id, execution.results)
        row = session.get(queries.TaskRow, task_id)
        row.state = "error" if execution.infra_error else "done"
        row.ended, row.timings, row.error = queries.now(), dict(execution.timings), execution.infra_error
        run = session.get(queries.Run, run_id)
        if execution.image_digest and run.image.digest != execution.image_digest:
            run.image = queries.image_row(session, task.image, execution.image_digest)
        run.meta = {**run.meta, task.suite.name: {"probe": execution.meta, "exit_code": execution.exit_code}}
        session.commit()
    summary.counts.update(_final_statuses(execution.results))
    summary.timings[task.suite.name] = dict(execution.timings)
    summary.digest = execution.image_digest or summary.digest
    if execution.infra_error:
        summary.infra_errors.append(execution.infra_error)
    if reporter:
        reporter.task_finished(task, execution)
    return "failed" if execution.infra_error else None


def _final_statuses(results: tuple[CheckResult, ...]) -> list[str]:
    last: dict[str, CheckResult] = {}
    for res in results:
        if res.check not in last or res.attempt >= last[res.check].attempt:
            last[res.check] = res
    return [r.status for r in last.values()]


def _finish_run(sessions: sessionmaker[Session], run_id: str, state: str, summary: RunSummary) -> None:
    with sessions() as session:
        run = session.get(queries.Run, run_id)
        run.state, run.ended = state, queries.now()
        session.commit()
