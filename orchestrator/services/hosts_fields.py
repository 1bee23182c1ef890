"""Hosts-file fields that would have no effect on the run asked for: one table, said as a
warning before anything runs.

A host's ``container_memory``, ``container_cpus`` and ``nvidia_runtime`` act on probe
containers, its ``rdma`` devices on a multi-node task's containers. A run whose every image is ``host`` (the local interpreter)
starts no container: such a field is ignored, and valorch says so, naming the file, line
and key. A warning, not exit 2: a hosts file is an inventory of machines shared by every job
and executor (``VALORCH_HOSTS`` is set once for every command), so a field that acts for
the next job is no mistake in this one. docs/input-validation.md lists every rule.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from .. import yamlio
from ..hosts.inventory import ENV
from ..scheduling.plan import PlannedRun

Planned = Sequence[PlannedRun]


def _no_container(planned: Planned) -> bool:
    return bool(planned) and all(pr.image.executor == "host" for pr in planned)


@dataclass(frozen=True)
class HostsFieldRule:
    key: str
    inert: Callable[[Planned], bool]
    why: str  # completes "key 'KEY' of host NAME has no effect ..."
    example: str  # the value the docs and the test write


_NO_CONTAINER = "on this run: its only image is host (the local interpreter), no container"
HOSTS_FIELD_RULES: tuple[HostsFieldRule, ...] = (
    HostsFieldRule("container_memory", _no_container, _NO_CONTAINER, "'4g'"),
    HostsFieldRule("container_cpus", _no_container, _NO_CONTAINER, "2"),
    HostsFieldRule("nvidia_runtime", _no_container, _NO_CONTAINER, "true"),
    HostsFieldRule("rdma", _no_container, _NO_CONTAINER, "['/dev/infiniband/uverbs0']"),
)


def hosts_path(given: Path | None) -> Path | None:
    """The hosts file a run reads: ``--hosts FILE``, else ``$VALORCH_HOSTS``, else none."""
    if given is not None:
        return given
    env = os.environ.get(ENV)
    return Path(env) if env else None


def _entries(doc: yamlio.Document) -> list[tuple[int, dict[str, object], yamlio.Document]]:
    data: object = doc.data
    root: tuple[str, ...] = ()
    if isinstance(data, dict) and set(data) == {"hosts"}:
        data, root = data["hosts"], ("hosts",)
    if not isinstance(data, list):
        return []
    return [(i, e, doc.sub((*root, i))) for i, e in enumerate(data) if isinstance(e, dict)]


def unused_fields(path: Path | None, planned: Planned) -> list[str]:
    """A warning for each field of the hosts file at ``path`` that ``planned`` ignores (the
    file was loaded and validated already: this only reads where each key was written)."""
    rules = [r for r in HOSTS_FIELD_RULES if r.inert(planned)]
    if path is None or not rules:
        return []
    doc = yamlio.load(path, "host inventory")
    said = []
    for _, entry, sub in _entries(doc):
        for rule in rules:
            if rule.key in entry and entry[rule.key] not in (None, False, [], ()):
                said.append(
                    f"{doc.path}:{sub.line((rule.key,))}: host inventory: key '{rule.key}' of "
                    f"host {entry.get('name')} has no effect {rule.why}; it is ignored"
                )
    return said
