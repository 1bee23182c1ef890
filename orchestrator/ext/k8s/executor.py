"""The kubernetes executor: one ``batch/v1`` Job per (image, suite) task.

UNTESTED AGAINST A LIVE CLUSTER (see docs/kubernetes.md): the manifests are
checked against the official client's models and a schema of the fields valorch
relies on; the API calls follow the client's documented signatures.

- The probe's ``.py`` files travel as a ConfigMap mounted read-only at
  ``/opt/valorch/valorch_probe`` (no image rebuild, no host path).
- GPUs are extended resources (``amd.com/gpu`` from AMD's device plugin,
  ``nvidia.com/gpu`` from NVIDIA's); archs become node affinity over the labels
  of AMD's node labeller (``amd.com/gpu.device-id``: the labeller publishes no
  gfx name, so a gfx arch maps to the PCI device ids of its products) and of
  NVIDIA's GPU feature discovery (``nvidia.com/gpu.compute.major`` / ``.minor``).
- ``restartPolicy: Never``, ``backoffLimit: 0`` (a failure is reported, the
  scheduler retries), ``activeDeadlineSeconds`` from the task's deadline,
  ``ttlSecondsAfterFinished`` as a safety net behind the explicit delete,
  ``/dev/shm`` as a memory ``emptyDir``, no privilege escalation, all
  capabilities dropped, no service-account token.

The manifest builders are pure (dicts); only :class:`KubernetesExecutor` talks
to the API, through the ``kubernetes`` package (``pip install valorch[k8s]``).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import re
import threading
import time
from collections.abc import Callable
from typing import Any

from orchestrator.bounds import EXTENDED_RESOURCE
from orchestrator.errors import InfrastructureError, NoMatchingHostError
from orchestrator.executors import gang
from orchestrator.executors.base import LABEL, PROBE_DIR, PROBE_PACKAGE, overall_timeout, probe_args
from orchestrator.executors.container import GPU_CACHE_ENV, PROFILING_CAPS, RDMA_CAPS, probe_env
from orchestrator.executors.transcript import Transcript, conclude, infrastructure_failure
from orchestrator.spec import Execution, HostSpec, Task

MOUNT = f"/opt/valorch/{PROBE_PACKAGE}"
TTL_AFTER_FINISHED = 3600
SHM_SIZE = "8Gi"
GPU_RESOURCE = {"rocm": "amd.com/gpu", "cuda": "nvidia.com/gpu"}
AMD_DEVICE_ID = "amd.com/gpu.device-id"
NV_MAJOR, NV_MINOR = "nvidia.com/gpu.compute.major", "nvidia.com/gpu.compute.minor"
# gfx arch → PCI device ids (lower-case hex, as the labeller writes them). Extend for your fleet.
GFX_DEVICE_IDS: dict[str, tuple[str, ...]] = {
    "gfx942": ("74a0", "74a1", "74a2", "74a5", "74b5"),  # MI300A, MI300X, MI308X, MI325X, MI300X VF
    "gfx90a": ("7408", "740c", "740f", "7410"),  # MI250X, MI250, MI210, MI210 VF
    "gfx908": ("738c", "738e"),  # MI100
}
SM = re.compile(r"^sm_(\d+)(\d)$")
LABEL_VALUE = re.compile(r"[^A-Za-z0-9_.\-]+")
LABEL_KEY = re.compile(
    r"^([a-z0-9]([a-z0-9.\-]*[a-z0-9])?/)?[A-Za-z0-9]([A-Za-z0-9_.\-]{0,61}[A-Za-z0-9])?$"
)


class KubernetesUnmatched(  # noqa: N818  # as NoMatchingHostError's other kinds: *Unmatched
    NoMatchingHostError
):
    """No node can ever run the pod (exit 3)."""


def label_value(text: str) -> str:
    """A valid label value: at most 63 characters of [A-Za-z0-9_.-], alphanumeric at both ends."""
    return LABEL_VALUE.sub("-", text)[:63].strip("-_.")


def object_name(*parts: str) -> str:
    """A DNS-1123 name (≤ 63): readable prefix + a hash of everything, so names never collide."""
    digest = hashlib.sha256("\0".join(parts).encode()).hexdigest()[:10]
    stem = re.sub(r"[^a-z0-9\-]+", "-", "-".join(parts).lower()).strip("-")[:40].strip("-")
    return f"valorch-{stem}-{digest}" if stem else f"valorch-{digest}"


def labels(task: Task, run_id: str) -> dict[str, str]:
    return {
        LABEL: "1",
        f"{LABEL}.run": label_value(run_id),
        f"{LABEL}.suite": label_value(task.suite.name),
        f"{LABEL}.image": label_value(task.image.alias),
    }


def node_affinity(
    backend: str, archs: tuple[str, ...], node_labels: tuple[str, ...] = ()
) -> dict[str, Any] | None:
    """``requiredDuringSchedulingIgnoredDuringExecution`` for the archs (alternatives)
    and node labels (``key=value`` → In, bare ``key`` → Exists; all required)."""
    common = []
    for lab in node_labels:
        key, _, value = lab.partition("=")
        if not LABEL_KEY.match(key):
            raise ValueError(f"{key!r} is not a valid node label key")
        common.append(
            {"key": key, "operator": "In", "values": [value]}
            if value
            else {"key": key, "operator": "Exists"}
        )
    terms: list[list[dict[str, Any]]] = [common]
    if archs and backend == "rocm":
        ids: list[str] = []
        for arch in archs:
            if arch not in GFX_DEVICE_IDS:
                raise KubernetesUnmatched(
                    f"no known AMD device id for arch {arch}",
                    f"known archs: {', '.join(sorted(GFX_DEVICE_IDS))} "
                    "(extend orchestrator.ext.k8s.executor.GFX_DEVICE_IDS)",
                )
            ids += GFX_DEVICE_IDS[arch]
        terms = [[*common, {"key": AMD_DEVICE_ID, "operator": "In", "values": sorted(set(ids))}]]
    elif archs and backend == "cuda":
        terms = []
        for arch in archs:
            m = SM.match(arch) or SM.match("sm_" + arch.replace(".", ""))
            if not m:
                raise ValueError(f"{arch!r} is not a CUDA arch (sm_90 or 9.0)")
            terms.append(
                [
                    *common,
                    {"key": NV_MAJOR, "operator": "In", "values": [m.group(1)]},
                    {"key": NV_MINOR, "operator": "In", "values": [m.group(2)]},
                ]
            )
    terms = [t for t in terms if t]
    if not terms:
        return None
    return {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": t} for t in terms]
            }
        }
    }


def probe_items() -> list[dict[str, str]]:
    """The probe's files as ConfigMap items: a key (no '/') and the path it is mounted at."""
    paths = [p.relative_to(PROBE_DIR).as_posix() for p in sorted(PROBE_DIR.rglob("*.py"))]
    return [{"key": rel.replace("/", "__"), "path": rel} for rel in paths]


def configmap_manifest(name: str, namespace: str, task: Task, run_id: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace, "labels": labels(task, run_id)},
        "data": {
            i["key"]: (PROBE_DIR / i["path"]).read_text(encoding="utf-8") for i in probe_items()
        },
    }


def job_manifest(
    task: Task,
    run_id: str,
    name: str,
    namespace: str,
    configmap: str,
    node_labels: tuple[str, ...] = (),
    gpus: int = 1,
    rdma_resource: str | None = None,
) -> dict[str, Any]:
    """The Job for one task (pure). ``rdma_resource`` (``--rdma-resource``, e.g. ``rdma/hca``):
    a multi-node GPU task's pods request one of that device plugin's resource and get
    CAP_IPC_LOCK (:func:`rdma_grant`); nothing for one node or a CPU task."""
    backend = "cpu" if task.cpu_only else task.image.backend
    meta_labels = labels(task, run_id)
    resources: dict[str, Any] = {}
    if backend in GPU_RESOURCE:
        resources = {"limits": {GPU_RESOURCE[backend]: str(gpus)}}
    rdma = rdma_grant(task, rdma_resource)
    if rdma:
        resources["limits"][rdma] = "1"
    arch_labels = tuple(lab for lab in node_labels if re.match(r"^(gfx[0-9a-f]+|sm_\d+)$", lab))
    other = tuple(lab for lab in node_labels if lab not in arch_labels)
    archs = tuple(getattr(task.image, "archs", ()) or ()) + arch_labels
    security: dict[str, Any] = {
        "allowPrivilegeEscalation": False,
        "capabilities": {"drop": ["ALL"]},
    }
    added: list[str] = []
    if task.suite.profiling_caps and backend in GPU_RESOURCE:  # opt-in: container.PROFILING_CAPS
        added += PROFILING_CAPS
    if rdma:  # opt-in: container.RDMA_CAPS (the memlock limit is the runtime's: docs/kubernetes.md)
        added += RDMA_CAPS
    if added:
        security["capabilities"]["add"] = added
    if backend != "rocm":  # ROCm's runtime needs syscalls the default profile blocks
        security["seccompProfile"] = {"type": "RuntimeDefault"}
    container = {
        "name": "probe",
        "image": task.image.reference,
        "imagePullPolicy": "Never" if task.image.local else "IfNotPresent",
        "command": ["python3", "-m", PROBE_PACKAGE, *probe_args(task)],
        "workingDir": "/opt/valorch",
        "env": [
            {"name": k, "value": v}
            for k, v in {
                **probe_env(),
                **(GPU_CACHE_ENV if backend in GPU_RESOURCE else {}),
            }.items()
        ],
        "resources": resources,
        "securityContext": security,
        "volumeMounts": [
            {"name": "probe", "mountPath": MOUNT, "readOnly": True},
            {"name": "dshm", "mountPath": "/dev/shm"},
        ],
    }
    pod_spec: dict[str, Any] = {
        "restartPolicy": "Never",
        "automountServiceAccountToken": False,
        "enableServiceLinks": False,
        "nodeSelector": {"kubernetes.io/os": "linux"},
        "containers": [container],
        "volumes": [
            {"name": "probe", "configMap": {"name": configmap, "items": probe_items()}},
            {"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": SHM_SIZE}},
        ],
    }
    if affinity := node_affinity(backend, archs if backend != "cpu" else (), other):
        pod_spec["affinity"] = affinity
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": namespace, "labels": meta_labels},
        "spec": {
            "backoffLimit": 0,
            "activeDeadlineSeconds": math.ceil(overall_timeout(task)),
            "ttlSecondsAfterFinished": TTL_AFTER_FINISHED,
            "template": {"metadata": {"labels": meta_labels}, "spec": pod_spec},
        },
    }


def rdma_grant(task: Task, resource: str | None) -> str | None:
    """The RDMA device plugin's resource a task's pods request, or None: only a multi-node GPU
    task, only when a resource is named (a device plugin, not hostPath volumes: a hostPath
    character device is outside the container's device cgroup, so only a privileged pod could
    open it; the plugin's Allocate adds the verbs devices to the cgroup, and its resource
    exists only on the nodes whose administrator installed it: the opt-in per node pool)."""
    if not resource or not task.multinode_gpu:
        return None
    if not re.fullmatch(EXTENDED_RESOURCE, resource):
        raise ValueError(f"{resource!r} is not an extended resource name (DOMAIN/NAME)")
    return resource


class KubernetesExecutor:
    """Creates the ConfigMap and the Job, follows the pod's log, deletes both."""

    name = "kubernetes"

    def __init__(
        self,
        namespace: str = "default",
        node_labels: tuple[str, ...] = (),
        context: str | None = None,
        api_client: Any = None,
        schedule_timeout: float = 600.0,
        poll: float = 2.0,
        rdma_resource: str | None = None,
    ) -> None:
        self.namespace = namespace
        self.rdma_resource = rdma_resource  # --rdma-resource: rdma_grant
        self.node_labels = tuple(node_labels)
        self.context = context
        self._api = api_client
        self.schedule_timeout = schedule_timeout
        self.poll = poll

    def _client(self) -> Any:
        try:
            from kubernetes import client, config
        except ImportError:
            raise InfrastructureError(
                "the kubernetes executor needs the kubernetes package", "pip install 'valorch[k8s]'"
            ) from None
        if self._api is None:
            try:
                config.load_kube_config(context=self.context)
            except Exception:  # noqa: BLE001 - fall back to the in-cluster service account
                config.load_incluster_config()
            self._api = client.ApiClient()
        return client

    def execute(
        self,
        task: Task,
        run_id: str,
        on_result: Callable[[Any], None] | None = None,
        on_started: Callable[[], None] | None = None,
    ) -> Execution:
        """The ConfigMap and the Job, the pod's log followed; a multi-node task also gets a
        headless Service and an Indexed Job of N pods (``gang``), every pod's log followed,
        the ranks merged. Whatever was made is deleted, also when interrupted or failed."""
        from kubernetes.client.exceptions import ApiException

        client = self._client()
        core, batch = client.CoreV1Api(self._api), client.BatchV1Api(self._api)
        name = object_name(task.image.alias, task.suite.name, run_id)
        t0 = time.perf_counter()
        transcript = Transcript(on_result=on_result)
        made: set[str] = set()
        try:
            configmap = configmap_manifest(name, self.namespace, task, run_id)
            self._create(core.create_namespaced_config_map, configmap, "V1ConfigMap")
            if task.nodes:
                service = service_manifest(name, self.namespace, labels(task, run_id))
                self._create(core.create_namespaced_service, service, "V1Service")
                made.add("service")
            job = job_manifest(
                task,
                run_id,
                name,
                self.namespace,
                name,
                self.node_labels,
                gpus=(task.suite.gpus_per_node or 1) if task.nodes else 1,
                rdma_resource=self.rdma_resource,  # rdma_grant: a multi-node GPU task only
            )
            if task.nodes:
                job = gang_job(job, task, name, self.namespace)
            self._create(batch.create_namespaced_job, job, "V1Job")
            made.add("job")
            if on_started is not None:
                on_started()
            if task.nodes:
                runs = follow(self, core, name, task, on_result)
            else:
                pod = self.wait_for_pod(core, name)
                read_log(core, self.namespace, pod, transcript)
                transcript.close()
                status = batch.read_namespaced_job_status(name, self.namespace).status
                failed = (c.reason for c in status.conditions or () if c.type == "Failed")
                reason = next(failed, None)
                exit_code = pod_exit_code(core, self.namespace, pod)
        except NoMatchingHostError as exc:
            return infrastructure_failure(task, f"unmatched on Kubernetes: {exc.message}")
        except (ApiException, InfrastructureError) as exc:
            return infrastructure_failure(task, f"Kubernetes: {str(exc)[:500]}")
        finally:  # interrupted, failed or done: the objects it made go
            self._delete(core, batch, name, made)
        timings = {"timings": {"total_s": time.perf_counter() - t0}}
        if task.nodes:
            out = gang.merge(task, runs)
            where = {"job": name, "namespace": self.namespace, "service": name}
            return out.model_copy(update={"meta": {**out.meta, "kubernetes": where}, **timings})
        killed = (
            "the Job passed its activeDeadlineSeconds" if reason == "DeadlineExceeded" else None
        )
        execution = conclude(
            transcript,
            task,
            exit_code=0 if exit_code is None else exit_code,
            killed=killed,
            kubernetes={"job": name, "namespace": self.namespace, "pod": pod},
        )
        return execution.model_copy(update={**timings, "exit_code": exit_code})

    def wait_for_pod(self, core: Any, job: str) -> str:
        """The Job's pod once it runs (or has ended); an unschedulable pod is unmatched."""
        end = time.monotonic() + self.schedule_timeout
        while True:
            pods = core.list_namespaced_pod(self.namespace, label_selector=f"job-name={job}").items
            for pod in pods:
                if pod.status.phase in ("Running", "Succeeded", "Failed"):
                    return pod.metadata.name
                for cond in pod.status.conditions or ():
                    if (
                        cond.type == "PodScheduled"
                        and cond.reason == "Unschedulable"
                        and time.monotonic() > end
                    ):
                        raise KubernetesUnmatched(
                            f"pod {pod.metadata.name} is unschedulable: {cond.message}"
                        )
            if time.monotonic() > end:
                raise InfrastructureError(
                    f"Job {job} has no running pod after {self.schedule_timeout:g}s"
                )
            time.sleep(self.poll)

    def _create(self, create: Callable[..., Any], manifest: dict[str, Any], kind: str) -> None:
        """Create an object in the namespace from its manifest, as the client's model (``V1Job``,
        ``V1ConfigMap``): what the API calls take."""
        create(
            self.namespace, self._api.deserialize(json.dumps(manifest), kind, "application/json")
        )

    def _delete(self, core: Any, batch: Any, name: str, made: set[str]) -> None:
        from kubernetes.client.exceptions import ApiException

        for call, created in (
            (batch.delete_namespaced_job, "job" in made),
            (core.delete_namespaced_config_map, True),
        ):
            if created:
                with contextlib.suppress(ApiException):
                    call(name, self.namespace, propagation_policy="Background")
        if "service" in made:
            with contextlib.suppress(ApiException):
                core.delete_namespaced_service(name, self.namespace)


# --- a multi-node task ------------------------------------------------------------------------
# A multi-node task on Kubernetes: an Indexed Job (``completionMode: Indexed``, N
# completions, all N pods in parallel, one per node by pod anti-affinity) and a headless
# Service whose DNS names the pods (``<job>-<index>.<service>``): pod 0 is the
# rendezvous. Each pod's rank is its completion index (the
# ``batch.kubernetes.io/job-completion-index`` annotation, through the downward API).
# ``backoffLimit: 0``: the first pod that fails fails the Job and Kubernetes ends the
# others; ``activeDeadlineSeconds`` bounds the whole; the executor deletes the Job, the
# Service and the ConfigMap in every case.
#
# The default scheduler places the pods one by one: a cluster that must never hold part of
# a gang while the rest waits needs a gang-scheduling queue in front (Kueue, Volcano),
# which is how such clusters are run; valorch's part is the all-or-nothing Job itself.

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
        code = pod_exit_code(core, namespace, p.metadata.name) if p is not None else None
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


def pod_exit_code(core: Any, namespace: str, pod: str) -> int | None:
    """The exit code of ``pod``'s probe container; None while it has not ended."""
    state = core.read_namespaced_pod(pod, namespace).status.container_statuses or []
    term = state[0].state.terminated if state else None
    return term.exit_code if term else None
