"""A multi-node task on Kubernetes: an Indexed Job (``completionMode: Indexed``, N
completions, all N pods in parallel, one per node by pod anti-affinity) and a headless
Service whose DNS names the pods (``<job>-<index>.<service>``): pod 0 is the
rendezvous. Each pod's rank is its completion index (the
``batch.kubernetes.io/job-completion-index`` annotation, through the downward API).
``backoffLimit: 0``: the first pod that fails fails the Job and Kubernetes ends the
others; ``activeDeadlineSeconds`` bounds the whole; the executor deletes the Job, the
Service and the ConfigMap in every case.

The default scheduler places the pods one by one: a cluster that must never hold part of
a gang while the rest waits needs a gang-scheduling queue in front (Kueue, Volcano),
which is how such clusters are run; valorch's part is the all-or-nothing Job itself.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from orchestrator.executors import gang
from orchestrator.executors.base import overall_timeout
from orchestrator.executors.transcript import Transcript, conclude
from orchestrator.spec import HostSpec, Task

if TYPE_CHECKING:
    from orchestrator.ext.k8s.executor import KubernetesExecutor

PORT = 29500
INDEX = "metadata.annotations['batch.kubernetes.io/job-completion-index']"


def service_manifest(name: str, namespace: str, labels: dict[str, str]) -> dict[str, Any]:
    """The headless Service that gives the Job's pods their DNS names."""
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": name, "namespace": namespace, "labels": labels},
        "spec": {
            "clusterIP": "None",
            "selector": {"job-name": name},
            "publishNotReadyAddresses": True,
            "ports": [{"name": "rendezvous", "port": PORT, "targetPort": PORT, "protocol": "TCP"}],
        },
    }


def gang_job(job: dict[str, Any], task: Task, name: str, namespace: str) -> dict[str, Any]:
    """``job_manifest``'s Job made, in place, an Indexed Job of ``task.node_count`` pods."""
    n = task.node_count
    job["spec"].update(completionMode="Indexed", completions=n, parallelism=n, backoffLimit=0)
    pod = job["spec"]["template"]["spec"]
    pod["subdomain"] = name
    pod["affinity"] = dict(
        pod.get("affinity") or {},
        podAntiAffinity={
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {
                    "labelSelector": {"matchLabels": {"job-name": name}},
                    "topologyKey": "kubernetes.io/hostname",
                }
            ]
        },
    )
    container = pod["containers"][0]
    container["env"] += [
        {"name": "MASTER_ADDR", "value": f"{name}-0.{name}.{namespace}.svc"},
        {"name": "MASTER_PORT", "value": str(PORT)},
        {"name": "WORLD_SIZE", "value": str(n)},
        {"name": "RANK", "valueFrom": {"fieldRef": {"fieldPath": INDEX}}},
        {"name": "NODE_RANK", "valueFrom": {"fieldRef": {"fieldPath": INDEX}}},
        {"name": "LOCAL_RANK", "value": "0"},
        {"name": "VALORCH_NODE", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}},
        {"name": "VALORCH_COLLECTIVE_TIMEOUT", "value": f"{gang.collective_timeout(task):g}"},
    ]
    container["ports"] = [{"name": "rendezvous", "containerPort": PORT, "protocol": "TCP"}]
    return job


def follow(
    executor: KubernetesExecutor,
    core: Any,
    name: str,
    task: Task,
    on_result: Callable[[Any], None] | None,
) -> list[gang.NodeRun]:
    """Every pod's log into its rank's transcript (a thread per pod), then how each ended."""
    n, namespace, poll = task.node_count, executor.namespace, executor.poll
    transcripts = [Transcript(on_result=on_result if r == 0 else None) for r in range(n)]
    executor.wait_for_pod(core, name)  # one pod runs (or the Job is unschedulable: raised there)
    end = time.monotonic() + overall_timeout(task) + executor.schedule_timeout
    pods: dict[int, Any] = {}
    while len(pods) < n and time.monotonic() < end:
        for p in core.list_namespaced_pod(namespace, label_selector=f"job-name={name}").items:
            idx = (p.metadata.annotations or {}).get("batch.kubernetes.io/job-completion-index")
            if idx is not None and p.status.phase in ("Running", "Succeeded", "Failed"):
                pods[int(idx)] = p
        time.sleep(poll if len(pods) < n else 0)

    threads = [
        threading.Thread(
            target=read_log, args=(core, namespace, p.metadata.name, transcripts[r]), daemon=True
        )
        for r, p in pods.items()
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(max(1.0, end - time.monotonic()))
    runs = []
    for r in range(n):
        transcripts[r].close()
        p = pods.get(r)
        node = (p.spec.node_name if p is not None else None) or f"pod-{r}"
        code = exit_code(core, namespace, p.metadata.name) if p is not None else None
        fault, why = None, ""
        if p is None:
            fault, why = "hung", "its pod never ran"
        elif code not in (0, None) and code != 143:
            fault, why = "died", f"its container exited with code {code}"
        execution = conclude(
            transcripts[r],
            task,
            exit_code=code,
            killed=None if code is not None else "the Job ended before this pod's container did",
        )
        runs.append(
            gang.NodeRun(r, HostSpec(name=node, endpoint=f"k8s://{node}"), execution, fault, why)
        )
    return runs


def read_log(core: Any, namespace: str, pod: str, transcript: Transcript) -> None:
    """The probe container's log of ``pod``, followed to its end, into ``transcript``."""
    stream = core.read_namespaced_pod_log(
        pod, namespace, container="probe", follow=True, _preload_content=False
    )
    for chunk in stream.stream(64 * 1024):
        transcript.feed(chunk)


def exit_code(core: Any, namespace: str, pod: str) -> int | None:
    """The exit code of ``pod``'s probe container; None while it has not ended."""
    state = core.read_namespaced_pod(pod, namespace).status.container_statuses or []
    term = state[0].state.terminated if state else None
    return term.exit_code if term else None
