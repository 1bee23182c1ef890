"""Planning for a Kubernetes cluster: the cluster's scheduler places each pod by its GPU
resource limits and node affinity (``ext/k8s/executor.py``), so every task goes to
one stand-in host that stands for the whole cluster; nothing is placed here."""

from __future__ import annotations

from orchestrator.catalog.core import Catalog
from orchestrator.scheduling.plan import PlannedRun, suite_checks, task_nodes
from orchestrator.spec import GPU, HostSpec, JobSpec, Task


def plan_on_kubernetes(
    job: JobSpec,
    catalog: Catalog,
    local: HostSpec,
    cpu_only: bool = False,
    namespace: str = "default",
) -> tuple[PlannedRun, ...]:
    images = catalog.select(job.images)
    gpus: list[GPU] = []
    for image in images:  # one stand-in GPU per GPU image, so one GPU task at a time per image
        vendor = image.backend.vendor
        if vendor and not cpu_only:
            arch = (image.archs or ("any",))[0]
            gpus.append(GPU.model_validate({"vendor": vendor, "arch": arch, "index": len(gpus)}))
    cluster = HostSpec(
        name=f"kubernetes-{namespace}",
        endpoint=f"k8s://{namespace}",
        labels=tuple(job.labels),
        slots=max(2, len(images)),
        gpus=tuple(gpus),
        nvidia_runtime=True,
    )
    out = []
    for image in images:
        host = local if image.executor == "host" else cluster
        tasks = tuple(
            _gang(
                Task(
                    image=image,
                    suite=s,
                    host=host,
                    checks=suite_checks(s),
                    cpu_only=cpu_only and image.backend != "cpu",
                )
            )
            for s in job.suites
        )
        out.append(PlannedRun(image, host, tasks))
    return tuple(out)


def _gang(task: Task) -> Task:
    """A multi-node task: N stand-in nodes (the Indexed Job's pods; the cluster places them)."""
    n = task_nodes(task.suite, task.checks)
    if n <= 1:
        return task
    nodes = tuple(
        task.host.model_copy(update={"name": f"{task.host.name}-pod{i}"}) for i in range(n)
    )
    return task.model_copy(update={"nodes": nodes})
