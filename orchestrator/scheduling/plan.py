"""Plan: a job expands to (image, suite) tasks placed on matching hosts (pure).

``plan`` places tasks with ``placement.place``: longest first onto the earliest-free
matching slot. A run is one image on one host; its suites are its tasks.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..catalog.core import Catalog
from ..checks_manifest import declared, info, manifest
from ..errors import InputError, NoMatchingHostError
from ..hosts.match import Requirement
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
        return tuple(
            CheckInfo.model_validate(i) for i in declared(suite.name, declaration, suite.checks)
        )
    checks = manifest().select(suite.name, suite.checks)
    return tuple(CheckInfo.model_validate(info(c)) for c in checks)


def requirement(
    image: ImageSpec, labels: tuple[str, ...] = (), cpu_only: bool = False, gpus: int | None = None
) -> Requirement:
    """What one node of a task needs: ``gpus`` (a suite's ``gpus_per_node``) GPUs, else one."""
    if cpu_only or image.backend == "cpu":
        return Requirement(backend="cpu", labels=labels, gpus=0)
    return Requirement.of(image, labels=labels, gpus=gpus or 1)


def task_nodes(suite: SuiteRef, checks: tuple[CheckInfo, ...]) -> int:
    """Nodes a task spans: the suite's ``nodes``, raised to what its checks need."""
    return max([suite.nodes, *(c.nodes for c in checks)])


def task_requirement(task: Task, labels: tuple[str, ...] = ()) -> Requirement:
    return requirement(task.image, labels, task.cpu_only, task.suite.gpus_per_node)


def distinct_addresses(hosts: tuple[HostSpec, ...]) -> None:
    """A gang needs distinct nodes: two hosts with one address are one machine listed
    twice (InputError, exit 2, naming them)."""
    seen: dict[str, str] = {}
    for h in hosts:
        other = seen.setdefault(h.net_address, h.name)
        if other != h.name:
            raise InputError(
                f"hosts {other} and {h.name} have the same address {h.net_address}: a multi-node "
                "task needs distinct nodes",
                "give each host its own `address:` (or endpoint) in the hosts file, or remove the "
                "duplicate entry",
            )


def expected_duration(task: Task, history: dict[tuple[str, str], float] | None = None) -> float:
    """Seconds a task is expected to take: its last measured time; else the suite's measured
    times on other images (their median: a first run of a new image is no unknown); else a
    guess per check."""
    if history and (task.image.alias, task.suite.name) in history:
        return history[(task.image.alias, task.suite.name)]
    same_suite = sorted(
        t for (_alias, suite), t in (history or {}).items() if suite == task.suite.name
    )
    if same_suite:
        return same_suite[len(same_suite) // 2]
    return 10.0 + 2.0 * len(task.checks)


def task_key(task: Task) -> str:
    return f"{task.image.alias}/{task.suite.name}"


def plan(
    job: JobSpec,
    catalog: Catalog,
    hosts: tuple[HostSpec, ...],
    local: HostSpec,
    cpu_only: bool = False,
    history: dict[tuple[str, str], float] | None = None,
    distinct: bool = True,
) -> tuple[PlannedRun, ...]:
    """Every (image, suite) of the job placed on a matching host; raises NoMatchingHostError
    (exit 3) before anything runs when an image has nowhere to go."""
    tasks: list[Task] = []
    nodes: dict[str, int] = {}
    for image in catalog.select(job.images):
        for s in job.suites:
            checks = suite_checks(s)
            t = Task(
                image=image,
                suite=s,
                host=local if image.executor == "host" else hosts[0],
                checks=checks,
                cpu_only=cpu_only and image.backend != "cpu",
            )
            nodes[task_key(t)] = task_nodes(s, checks)
            if nodes[task_key(t)] > 1 and image.executor == "host":
                raise InputError(
                    f"suite {s.name} spans {nodes[task_key(t)]} nodes: the image 'host' (the local "
                    "interpreter) runs on this machine only",
                    "run it in a container image",
                )
            tasks.append(t)
    placed: dict[str, tuple[HostSpec, ...]] = {
        task_key(t): (t.host,) for t in tasks if t.image.executor == "host"
    }
    needs = [
        Need(
            task_key(t),
            task_requirement(t, job.labels),
            expected_duration(t, history),
            label=t.image.alias,
            nodes=nodes[task_key(t)],
        )
        for t in tasks
        if t.image.executor != "host"
    ]
    # a cluster scheduler's nodes are distinct by name
    if distinct and any(n.nodes > 1 for n in needs):
        distinct_addresses(hosts)
    by_name = {h.name: h for h in hosts}
    placement = place(needs, hosts)
    for a in placement.assignments:
        placed[a.key] = tuple(by_name[h] for h in (a.hosts or (a.host,)))
    gpus = {a.key: a.node_gpus for a in placement.assignments if a.hosts}
    groups: dict[tuple[str, str], list[Task]] = {}
    for t in tasks:
        on = placed[task_key(t)]
        update: dict[str, object] = {"host": on[0]}
        if len(on) > 1:  # a gang: every node's host, and the GPUs the plan gave it there
            update["nodes"] = on
            update["node_gpus"] = tuple(
                tuple(g for g in h.gpus if g.index in idx)
                for h, idx in zip(on, gpus[task_key(t)], strict=False)
            )
        groups.setdefault((t.image.alias, on[0].name), []).append(t.model_copy(update=update))
    return tuple(PlannedRun(ts[0].image, ts[0].host, tuple(ts)) for ts in groups.values())


@dataclass(frozen=True)
class Unplaced:
    """An image of a job that no host can run: ``plan``'s own error, in the run's words."""

    image: str
    reason: str
    hint: str


def unplaceable(
    job: JobSpec, catalog: Catalog, hosts: tuple[HostSpec, ...], cpu_only: bool = False
) -> tuple[Unplaced, ...]:
    """Each image of ``job`` that ``plan`` (the run's placement, the same function) cannot
    place on ``hosts``, with the error ``valorch run`` stops on (exit 3): every such image,
    not only the first. The ``host`` image runs on this machine and always has a place."""
    out: list[Unplaced] = []
    for image in catalog.select(job.images):
        if image.executor == "host":
            continue
        one = job.model_copy(update={"images": (image.alias,)})
        try:
            plan(one, Catalog((image,)), hosts, hosts[0], cpu_only=cpu_only)
        except NoMatchingHostError as exc:
            out.append(Unplaced(image.alias, exc.message, exc.hint or ""))
    return tuple(out)
