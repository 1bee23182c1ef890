"""What every stage of the pipeline (``services/pipeline``) passes on: ``Where`` (the options
``run``, ``qualify`` and ``bisect`` share) and ``Placement`` (a planned, staged job), apart
from the stages so that planning (``services/run``) and the batch both import them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..catalog.core import Catalog
    from ..executors.base import Executor
    from ..scheduling.plan import PlannedRun
    from ..spec import HostSpec
    from .pull import Staged

#: an executor for each planned run: the host interpreter, a host's engine, a cluster
ExecutorFor = Callable[["PlannedRun"], "Executor"]


@dataclass(frozen=True)
class Where:
    """Where and how a job's checks run: the executor and its hosts or cluster, how images
    reach them, and how often (``commands/placing.OPTIONS``, one flag a field)."""

    executor: str = "docker"
    cpu_only: bool = False
    hosts_file: Path | None = None
    partition: str | None = None  # Slurm
    slurm_spool: Path | None = None  # Slurm: where job files go (default: executors.slurm)
    namespace: str = "default"  # Kubernetes
    rdma_resource: str | None = None  # Kubernetes: a multi-node GPU task's RDMA device plugin
    secrets_visible: bool = False  # --host-secrets-visible (executors/hostguard.py)
    pull: str = "missing"
    ca: Path | None = None  # the registry's CA
    retries: int = 2  # re-runs on another host after an infrastructure error
    repeat: int = 1  # batches one after the other, never side by side (timings would compete)


@dataclass(frozen=True)
class Placement:
    """Where a job's tasks go and who runs them."""

    planned: tuple[PlannedRun, ...]
    executor_for: ExecutorFor
    # None: the cluster scheduler (Slurm, Kubernetes) places, no retries here
    hosts: tuple[HostSpec, ...] | None
    history: dict[tuple[str, str], float] | None = None
    staged: dict[tuple[str, str], Staged | None] = field(default_factory=dict)  # by (host, alias)
    reap: bool = False  # leftover containers of finished runs to remove from the hosts
    catalog: Catalog | None = None  # whose pins the triage of failing checks compares digests with
    # {"host", "reason", "at"}: recorded on each run of the batch
    quarantined: tuple[dict[str, str], ...] = ()
