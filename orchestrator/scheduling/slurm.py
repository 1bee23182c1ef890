"""Planning on a Slurm cluster: the normal plan over the cluster's nodes (pure, given
the nodes that ``sinfo`` lists)."""

from __future__ import annotations

from ..catalog.core import Catalog
from ..errors import NoMatchingHostError
from ..executors.slurm.client import SlurmCluster, SlurmUnmatched
from ..executors.slurm.nodes import cluster_hosts
from ..hosts.detect import detect_local
from ..spec import HostSpec, JobSpec
from .plan import PlannedRun, plan


def plan_on_slurm(
    job: JobSpec,
    catalog: Catalog,
    cluster: SlurmCluster,
    cpu_only: bool = False,
    nodes: tuple[HostSpec, ...] | None = None,
) -> tuple[PlannedRun, ...]:
    """The normal plan over the cluster's nodes; no match is :class:`SlurmUnmatched`
    (exit 3). Slurm, not the plan, picks the node: a matched run's host is the
    cluster (``slurm-<partition>``), and the node the job ran on is recorded in
    the run's meta (``<suite>.probe.slurm.node``). ``nodes``: ``cluster_hosts``, when
    the caller has asked already."""
    nodes = cluster_hosts(cluster) if nodes is None else nodes
    try:
        planned = plan(job, catalog, nodes, detect_local(), cpu_only=cpu_only, distinct=False)
    except NoMatchingHostError as exc:
        raise SlurmUnmatched(
            f"unmatched on Slurm: {exc.message}",
            "the cluster's node features and GPU GRES are listed by `sinfo -N -o '%N %f %G'`",
        ) from None
    whole = HostSpec(
        name=f"slurm-{cluster.partition}" if cluster.partition else "slurm",
        endpoint=f"slurm://{cluster.partition or ''}",
        labels=tuple(dict.fromkeys(lab for n in nodes for lab in n.labels)),
        slots=sum(n.slots for n in nodes),
        nvidia_runtime=any(n.nvidia_runtime for n in nodes),
        # every node's GPUs, numbered across the cluster: the scheduler runs as many
        # GPU tasks at once as the cluster has GPUs; Slurm assigns the real ones
        gpus=tuple(
            g.model_copy(update={"index": i, "render_minor": None})
            for i, g in enumerate(g for n in nodes for g in n.gpus)
        ),
    )
    names = {n.name for n in nodes}
    return tuple(
        PlannedRun(pr.image, whole, tuple(t.model_copy(update={"host": whole}) for t in pr.tasks))
        if pr.host.name in names
        else pr
        for pr in planned
    )
