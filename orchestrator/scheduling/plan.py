"""Plan: a job expands to (image, suite) tasks placed on matching hosts (pure).

``plan`` places tasks with ``placement.place``: longest first onto the earliest-free
matching slot. A run is one image on one host; its suites are its tasks.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..catalog.core import Catalog
from ..hosts.match import Requirement
from ..probe.registry import select as select_checks
from ..spec import CheckInfo, HostSpec, ImageSpec, JobSpec, SuiteRef, Task
from .placement import Need, place

@dataclass(frozen=True)
class PlannedRun:
    image: ImageSpec
    host: HostSpec
    tasks: tuple[Task, ...]


def suite_checks(suite: SuiteRef) -> tuple[CheckInfo, ...]:
    declaration = suite.declaration()
    if declaration is not None:  # command checks / a pytest workload declared by the job
        from ..probe.declared import infos

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
