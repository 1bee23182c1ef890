"""Executors: one protocol (``base.Executor``), one registry of the ways to run a probe.

Modelled on cibuildwheel's ``ALL_PLATFORM_MODULES``: a name → the module and class that
implement it, imported only when chosen (the Docker SDK, the Kubernetes client and the
Slurm helpers cost start-up time that a command which runs nothing should not pay).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
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


def executor_class(name: str) -> Callable[..., Executor]:
    """The executor class registered under ``name`` (imported now); each takes its own
    arguments (a host, a cluster, a namespace) and makes an ``Executor``."""
    module, _, cls = REGISTRY[name].partition(":")
    made: Callable[..., Executor] = getattr(importlib.import_module(module), cls)
    return made


def create(name: str, *args: Any, **kwargs: Any) -> Executor:
    return executor_class(name)(*args, **kwargs)
