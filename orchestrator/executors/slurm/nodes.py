"""A Slurm cluster's nodes as hosts, so that the normal matching applies."""

from __future__ import annotations

import re

from ...spec import GPU, HostSpec, vendor_of
from .client import SlurmCluster, SlurmError

ARCH_FEATURE = re.compile(r"^(gfx[0-9a-f]+|sm_[0-9]+)$")
#: The node feature (slurm.conf ``Features=``) by which a cluster's administrator opts a node
#: in to RDMA for multi-node GPU tasks: its verbs devices, CAP_IPC_LOCK and an unlimited
#: memlock in the step's container (executor.rdma_options; the cost: docs/architecture.md).
RDMA_FEATURE = "rdma"


def hosts_from_sinfo(text: str) -> tuple[HostSpec, ...]:
    """``sinfo -h -N -o '%N|%f|%G'`` → one HostSpec per node: GPUs from the gpu
    GRES (vendor from the feature ``rocm``/``cuda``, arch from a ``gfx*`` /
    ``sm_*`` feature, product from the GRES type), labels = features + ``cpu``."""
    hosts: dict[str, HostSpec] = {}
    for line in text.splitlines():
        parts = line.strip().split("|")
        if len(parts) != 3 or not parts[0] or parts[0] in hosts:
            continue
        name, feats, gres_text = parts
        features = tuple(f for f in feats.split(",") if f and f != "(null)")
        vendor = next((vendor_of(b) for b in ("rocm", "cuda") if b in features), None)
        archs = [f for f in features if ARCH_FEATURE.match(f)]
        if vendor is None and archs:
            vendor = "amd" if archs[0].startswith("gfx") else "nvidia"
        arch = next(
            (a for a in archs if a.startswith("gfx" if vendor == "amd" else "sm_")), "unknown"
        )
        gpus: list[GPU] = []
        for kind, count in _gpu_gres(gres_text):
            for _ in range(count if vendor else 0):
                gpus.append(
                    GPU(
                        vendor="amd" if vendor == "amd" else "nvidia",
                        arch=arch,
                        index=len(gpus),
                        product=kind,
                        render_minor=128 + len(gpus) if vendor == "amd" else None,
                    )
                )
        hosts[name] = HostSpec(
            name=name,
            endpoint=f"slurm://{name}",
            labels=tuple(dict.fromkeys(("cpu", *features))),
            slots=max(1, len(gpus)),
            gpus=tuple(gpus),
            nvidia_runtime=vendor == "nvidia",
        )
    return tuple(hosts.values())


def rdma_nodes(hosts: tuple[HostSpec, ...]) -> tuple[str, ...]:
    """The nodes whose features include :data:`RDMA_FEATURE` (the administrator's opt-in)."""
    return tuple(h.name for h in hosts if RDMA_FEATURE in h.labels)


def _gpu_gres(text: str) -> list[tuple[str | None, int]]:
    """``gpu:mi300x:2(S:0-1),shard:4`` → [("mi300x", 2)]."""
    found = []
    for item in re.sub(r"\([^)]*\)", "", text).split(","):
        fields = item.strip().split(":")
        if fields[0] != "gpu" or len(fields) < 2 or not fields[-1].isdigit():
            continue
        found.append((fields[1] if len(fields) >= 3 else None, int(fields[-1])))
    return found


def cluster_hosts(cluster: SlurmCluster) -> tuple[HostSpec, ...]:
    hosts = hosts_from_sinfo(cluster.sinfo("-N", "-o", "%N|%f|%G"))
    if not hosts:
        raise SlurmError(
            f"sinfo lists no node{' in partition ' + cluster.partition if cluster.partition else ''}",
            hint="check --partition and `sinfo -N`",
        )
    return hosts
