"""Executors: one protocol (``base.Executor``), one registry of the ways to run a probe.

Modelled on cibuildwheel's ``ALL_PLATFORM_MODULES``: a name → the module and class that
implement it, imported only when chosen (the Docker SDK, the Kubernetes client and the
Slurm helpers cost start-up time that a command which runs nothing should not pay).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .sdk import defer_ssh_transport

if TYPE_CHECKING:
    from .base import Executor

defer_ssh_transport()

#: --executor choices → "module:Class"
REGISTRY: dict[str, str] = {
    "host": "orchestrator.executors.host:HostExecutor",
    "docker": "orchestrator.executors.docker:DockerExecutor",
    "slurm": "orchestrator.executors.slurm.executor:SlurmExecutor",
    "kubernetes": "orchestrator.ext.k8s.executor:KubernetesExecutor",
}
NAMES: tuple[str, ...] = tuple(REGISTRY)


def create(name: str, *args: Any, **kwargs: Any) -> Executor:
    """The executor registered under ``name`` (its module imported now), made from its own
    arguments (a host, a cluster, a namespace)."""
    module, _, cls = REGISTRY[name].partition(":")
    made: Executor = getattr(importlib.import_module(module), cls)(*args, **kwargs)
    return made
