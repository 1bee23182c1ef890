"""RDMA for multi-node GPU tasks, opt-in per host: the hosts file's ``rdma`` devices (docker),
a Slurm node's feature ``rdma`` and ``--rdma-resource`` (Kubernetes, experimental: the
manifests only), with CAP_IPC_LOCK and an unlimited memlock, reach only a multi-node GPU
task's container on such a host; nothing changes elsewhere."""

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from orchestrator.catalog.core import Catalog
from orchestrator.executors.container import RDMA_CAPS, RDMA_ULIMITS, task_container
from orchestrator.executors.docker import create_kwargs
from orchestrator.executors.slurm import nodes
from orchestrator.executors.slurm.executor import STEP, create_options, step_argv
from orchestrator.executors.slurm.nodes import hosts_from_sinfo, rdma_nodes
from orchestrator.ext.k8s.executor import gang_job, job_manifest
from orchestrator.services.placing import Where
from orchestrator.services.run import _on_cluster
from orchestrator.spec import GPU, HostSpec, ImageSpec, JobSpec, SuiteRef, Task

IMG = ImageSpec(alias="g", reference="nvcr.io/x:1", backend="cuda")
GPUS = tuple(GPU(index=i, vendor="nvidia", arch="sm_90", memory_mib=81559) for i in range(8))
RDMA = ("/dev/infiniband/uverbs0", "/dev/infiniband/rdma_cm")


def container(host, nodes=2, cpu_only=False):
    suite = SuiteRef(name="multinode", nodes=nodes)
    task = Task(image=IMG, suite=suite, host=host, checks=(), cpu_only=cpu_only)
    return task_container(task, "run")


def test_a_multinode_gpu_task_on_an_rdma_host_gets_the_devices_ipc_lock_and_memlock():
    spec = container(HostSpec(name="ib", gpus=GPUS, nvidia_runtime=True, rdma=RDMA))
    assert "/dev/infiniband/uverbs0:/dev/infiniband/uverbs0:rwm" in spec.devices
    assert "IPC_LOCK" in spec.cap_add and spec.ulimits == (("memlock", -1, -1),)
    assert "--ulimit" in spec.docker_flags() and "memlock=-1:-1" in spec.docker_flags()
    (ulimit,) = create_kwargs(spec)["ulimits"]
    assert (ulimit["Name"], ulimit["Soft"], ulimit["Hard"]) == ("memlock", -1, -1)


@pytest.mark.parametrize(
    ("host", "nodes", "cpu_only"),
    [
        (HostSpec(name="plain", gpus=GPUS, nvidia_runtime=True), 2, False),  # not opted in
        (HostSpec(name="ib", gpus=GPUS, nvidia_runtime=True, rdma=RDMA), 1, False),  # one node
        (HostSpec(name="ib", gpus=GPUS, nvidia_runtime=True, rdma=RDMA), 2, True),  # CPU only
    ],
)
def test_nothing_is_added_elsewhere(host, nodes, cpu_only):
    spec = container(host, nodes, cpu_only)
    assert "IPC_LOCK" not in spec.cap_add and spec.ulimits == ()
    assert not any("infiniband" in d for d in spec.devices)


def test_only_rdma_device_nodes_are_accepted():
    with pytest.raises(ValidationError, match="not an RDMA device node"):
        HostSpec(name="x", rdma=("/dev/sda",))
    assert HostSpec(name="a").fingerprint == HostSpec(name="a", rdma=RDMA).fingerprint


# --- Slurm: the node feature rdma (slurm.conf Features=) is the administrator's opt-in ---

SINFO = (
    "ib0|cuda,sm_90,rdma|gpu:h100:8\nib1|cuda,sm_90,rdma|gpu:h100:8\neth0|cuda,sm_90|gpu:h100:8\n"
)


def gang_task(nodes=2, backend="cuda", cpu_only=False):
    image = ImageSpec(alias="g", reference="nvcr.io/x:1", backend=backend)
    suite = SuiteRef(name="multinode", nodes=nodes)
    hosts = tuple(HostSpec(name=f"n{i}", endpoint=f"slurm://n{i}") for i in range(nodes))
    return Task(
        image=image,
        suite=suite,
        host=HostSpec(name="slurm"),
        checks=(),
        nodes=hosts if nodes > 1 else (),
        cpu_only=cpu_only,
    )


def step_rdma(argv):
    """The step's RDMA arguments: (nodes, options) after its N docker-create options."""
    at = argv.index("valorch-step") + 4
    n = int(argv[at])
    rnodes, m = argv[at + 1 + n], int(argv[at + 2 + n])
    return rnodes, argv[at + 3 + n : at + 3 + n + m]


def test_the_slurm_nodes_with_the_feature_rdma_are_the_opted_in_ones():
    assert rdma_nodes(hosts_from_sinfo(SINFO)) == ("ib0", "ib1")
    assert rdma_nodes(hosts_from_sinfo("eth0|cuda,sm_90|gpu:h100:8\n")) == ()


def test_a_multinode_gpu_step_gets_ipc_lock_and_memlock_for_the_opted_in_nodes():
    argv = step_argv(gang_task(), "run", "/spool/p.tar", ("ib0", "ib1"))
    rnodes, ropts = step_rdma(argv)
    assert rnodes == "ib0,ib1"
    # the docker executor's values, not a copy of them
    assert ropts == [f"--cap-add={c}" for c in RDMA_CAPS] + ["--ulimit", "memlock=-1:-1"]
    assert RDMA_CAPS == ("IPC_LOCK",) and RDMA_ULIMITS == (("memlock", -1, -1),)
    # the step adds them (and the node's verbs devices) on a listed node only
    assert 'case ",$rnodes," in' in STEP and "/dev/infiniband/uverbs*" in STEP
    assert '--device "$d:$d:rwm"' in STEP
    # never in the options every node gets
    assert not any("IPC_LOCK" in o or "memlock" in o for o in create_options(gang_task(), "run"))


@pytest.mark.parametrize(
    ("task", "nodes"),
    [
        (gang_task(), ()),  # no node of the cluster opted in
        (gang_task(nodes=1), ("ib0",)),  # one node
        (gang_task(cpu_only=True), ("ib0", "ib1")),  # --cpu-only
        (gang_task(backend="cpu"), ("ib0", "ib1")),  # a CPU image
    ],
)
def test_a_slurm_step_gets_nothing_of_it_elsewhere(task, nodes):
    assert step_rdma(step_argv(task, "run", "/spool/p.tar", nodes)) == ("", [])


# --- Kubernetes (experimental, never run against a live cluster): --rdma-resource ---


def k8s_manifest(task, resource="rdma/hca", profiling=False):
    if profiling:
        task = task.model_copy(
            update={"suite": task.suite.model_copy(update={"profiling_caps": True})}
        )
    job = job_manifest(task, "run", "j", "ns", "cm", gpus=8, rdma_resource=resource)
    if task.nodes:
        job = gang_job(job, task, "j", "ns")
    (container,) = job["spec"]["template"]["spec"]["containers"]
    return container


def test_a_multinode_gpu_pod_requests_the_rdma_resource_and_gets_ipc_lock():
    container = k8s_manifest(gang_task())
    assert container["resources"]["limits"] == {"nvidia.com/gpu": "8", "rdma/hca": "1"}
    security = container["securityContext"]
    assert security["capabilities"] == {"drop": ["ALL"], "add": ["IPC_LOCK"]}
    assert security["allowPrivilegeEscalation"] is False
    assert "volumes" not in container and all(
        "hostPath" not in v
        for v in job_manifest(gang_task(), "run", "j", "ns", "cm", rdma_resource="rdma/hca")[
            "spec"
        ]["template"]["spec"]["volumes"]
    )
    both = k8s_manifest(gang_task(), profiling=True)["securityContext"]["capabilities"]
    assert both["add"] == ["SYS_ADMIN", "IPC_LOCK"]


@pytest.mark.parametrize(
    ("task", "resource"),
    [
        (gang_task(), None),  # not asked for
        (gang_task(nodes=1), "rdma/hca"),  # one node
        (gang_task(cpu_only=True), "rdma/hca"),  # --cpu-only
    ],
)
def test_a_pod_gets_nothing_of_it_elsewhere(task, resource):
    container = k8s_manifest(task, resource)
    assert "rdma/hca" not in container["resources"].get("limits", {})
    assert "add" not in container["securityContext"]["capabilities"]


@pytest.mark.parametrize("bad", ["hca", "rdma/", "/hca", "RDMA/hca", "rdma/hca/x", "a b/c"])
def test_a_malformed_resource_is_refused_by_the_manifest(bad):
    with pytest.raises(ValueError, match="not an extended resource"):
        job_manifest(gang_task(), "run", "j", "ns", "cm", rdma_resource=bad)


@pytest.mark.parametrize(
    "bad", ["hca", "RDMA/hca", "kubernetes.io/hca", "rdma/hca;x", "x" * 300 + "/y"]
)
def test_a_malformed_flag_is_exit_2_naming_it(cli, bad):
    proc = cli("run", "--image", "host", "--executor", "kubernetes", "--rdma-resource", bad)
    assert proc.returncode == 2, proc.stderr
    assert "--rdma-resource" in proc.stderr and "DOMAIN/NAME" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_the_flag_on_a_run_without_a_multinode_gpu_task_is_exit_2(cli):
    proc = cli(
        "run",
        "--image",
        "cpu_debian12_py3.11_pytorch_2.13",
        "--executor",
        "kubernetes",
        "--rdma-resource",
        "rdma/hca",
    )
    assert proc.returncode == 2, proc.stderr
    assert "applies to a multi-node GPU task" in proc.stderr and "Traceback" not in proc.stderr


# --- the run's placement hands each cluster executor its opt-in ---


def cuda_gang_job():
    cat = Catalog.load(Path(__file__).resolve().parents[2] / "images")
    suites = (SuiteRef(name="multinode", nodes=2),)
    return cat, JobSpec(name="j", images=("cuda12.4_cudnn9_pytorch_2.4",), suites=suites)


def test_a_slurm_run_gives_its_executor_the_nodes_sinfo_calls_rdma(monkeypatch):
    monkeypatch.setattr(nodes, "cluster_hosts", lambda cluster: hosts_from_sinfo(SINFO))
    cat, spec = cuda_gang_job()
    placed = _on_cluster(spec, cat, Where(executor="slurm", slurm_spool=Path("/tmp/spool")))
    (pr,) = placed.planned
    assert placed.executor_for(pr).rdma_nodes == ("ib0", "ib1")


def test_a_kubernetes_run_gives_its_executor_the_rdma_resource():
    cat, spec = cuda_gang_job()
    where = Where(executor="kubernetes", rdma_resource="rdma/hca")
    placed = _on_cluster(spec, cat, where)
    (pr,) = placed.planned
    assert placed.executor_for(pr).rdma_resource == "rdma/hca"


def test_the_opted_in_gang_job_is_a_valid_model_unchanged():
    kubernetes = pytest.importorskip("kubernetes", reason="pip install 'valorch[k8s]'")
    api = kubernetes.client.ApiClient()
    task = gang_task()
    job = job_manifest(task, "run", "j", "ns", "cm", gpus=8, rdma_resource="rdma/hca")
    job = gang_job(job, task, "j", "ns")
    model = api.deserialize(json.dumps(job), "V1Job", "application/json")
    back = api.sanitize_for_serialization(model)
    (container,) = back["spec"]["template"]["spec"]["containers"]
    assert container["resources"]["limits"]["rdma/hca"] == "1"
    assert container["securityContext"]["capabilities"] == {"add": ["IPC_LOCK"], "drop": ["ALL"]}
