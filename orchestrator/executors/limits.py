"""Memory and CPU limits of a probe container (pure, apart from the engine's totals).

Precedence: the suite's ``memory`` / ``cpus`` (a job spec), then the host's
``container_memory`` / ``container_cpus`` (a hosts file), then the default: an even
share of what the engine reports (``docker info``: MemTotal, NCPU) among the tasks
the host runs at once, which is one per GPU plus its CPU ``slots``.

Why a share and not a small fixed number: a GPU workload needs host memory in
proportion to its GPU (the model's weights are loaded and pinned in host memory
before they are copied, data loaders hold batches), and GPU nodes are sized for
that (commonly 1-2x the GPUs' memory in RAM). An even share of 90 % of the node
gives every concurrent task what the node was sized to give it and leaves 10 % to
the host itself, so a runaway check is killed by its container's limit (a
``crash``, "killed: out of memory") rather than taking the host and the other
tasks with it. The floor (2 GiB, or 90 % of a smaller node) keeps a small CI
machine usable.
"""

from __future__ import annotations

import re

from ..spec import Task, memory_bytes
from .container import Limits

NODE_FRACTION = 0.9  # of the engine's memory, shared among concurrent tasks
FLOOR = 2 << 30  # bytes: a share never below this (or 90 % of a smaller node)
_SIZE = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*([kmgt]?)i?b?\s*$", re.IGNORECASE)


def parse_size(text: str | int) -> int:
    """Bytes of a docker-style size: 512m, 2g, 1.5G, 2GiB, or a number of bytes (bounded:
    ``spec.memory_bytes``)."""
    if isinstance(text, int):
        return text
    m = _SIZE.match(str(text))
    if not m:
        raise ValueError(f"{text!r} is not a size (e.g. 512m, 8g, 1.5g)")
    return memory_bytes(f"{m.group(1)}{m.group(2)}")


def limits_for(task: Task, mem_total: int | None, ncpu: int | None) -> Limits:
    """The limits of ``task``'s container, given the engine's memory and CPU count (None: unknown)."""
    suite, host = task.suite, task.host
    memory = suite.memory or host.container_memory
    cpus = suite.cpus or host.container_cpus
    share = max(1, len(host.gpus) + host.slots)  # tasks at once: one per GPU, plus CPU slots
    if memory is not None:
        # never above the engine's memory: a limit the host cannot give is no limit
        mem = min(parse_size(memory), mem_total) if mem_total else parse_size(memory)
    elif mem_total:
        node = int(mem_total * NODE_FRACTION)
        mem = max(min(FLOOR, node), node // share)
    else:
        mem = None
    if cpus is not None and ncpu:
        cpus = min(cpus, float(ncpu))  # the engine refuses more CPUs than it has
    if cpus is None and ncpu:
        cpus = max(1.0, round(ncpu / share, 2)) if share < ncpu else 1.0
    return Limits(memory=mem, cpus=float(cpus) if cpus else None)
