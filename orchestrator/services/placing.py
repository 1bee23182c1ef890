"""The nouns of a run that every stage of the pipeline passes on (``services/pipeline``):
``Where`` (where and how the checks run: the options ``run``, ``qualify`` and ``bisect``
share), ``Staging`` (who hears of pulls and quarantined hosts) and ``Placement`` (a planned,
staged job). They live apart from the stages so that planning (``services/run``) and the
batch (``services/batch``) both import them and neither imports the other back."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..catalog.core import Catalog
    from ..executors.base import Executor
    from ..executors.pull import PullEvent
    from ..scheduling.plan import PlannedRun
    from ..spec import HostSpec
    from .preflight import Verdict
    from .pull import Staged

#: an executor for each planned run: the host interpreter, a host's engine, a cluster
ExecutorFor = Callable[["PlannedRun"], "Executor"]


@dataclass(frozen=True)
class Where:
    """Where and how a job's checks run: the executor and its hosts or cluster (``--executor``,
    ``--cpu-only``, ``--hosts``, ``--partition``, ``--slurm-spool``, ``--namespace``,
    ``--rdma-resource``, ``--host-secrets-visible``), how images reach them (``--pull``,
    ``--ca``), and how often (``--retries``, ``--repeat``)."""

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
    # the whole job this many times, one batch after the other (never side by side, so that
    # repeated timings do not compete for the host): ``valorch diff latest:ALIAS:N`` pools them
    repeat: int = 1


@dataclass(frozen=True)
class Staging:
    """Who hears, while the hosts are readied, of each pull and each quarantined host."""

    on_pull: Callable[[str, PullEvent], None] | None = None
    on_quarantine: Callable[[Verdict], None] | None = None


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
