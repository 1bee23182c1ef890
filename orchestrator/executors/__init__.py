"""Executors: one protocol (``base.Executor``), one registry of the ways to run a probe.

Modelled on cibuildwheel's ``ALL_PLATFORM_MODULES``: a name → the module and class that
implement it, imported only when chosen (the Docker SDK, the Kubernetes client and the
Slurm helpers cost start-up time that a command which runs nothing should not pay).
"""

from __future__ import annotations

import importlib
from typing import Any

from .sdk import defer_ssh_transport

defer_ssh_transport()

#: --executor choices → "module:Class"
REGISTRY: dict[str, str] = {
    "host": "orchestrator.executors.host:HostExecutor",
    "docker": "orchestrator.executors.docker:DockerExecutor",
    "slurm": "orchestrator.executors.slurm.executor:SlurmExecutor",
    "kubernetes": "orchestrator.executors.kubernetes:KubernetesExecutor",
}
NAMES: tuple[str, ...] = tuple(REGISTRY)


def executor_class(name: str) -> Any:
    """The executor class registered under ``name`` (imported now)."""
    module, _, cls = REGISTRY[name].partition(":")
    return getattr(importlib.import_module(module), cls)


def create(name: str, *args: Any, **kwargs: Any) -> Any:
    return executor_class(name)(*args, **kwargs)
