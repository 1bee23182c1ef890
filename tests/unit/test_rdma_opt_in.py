"""RDMA for multi-node GPU tasks, opt-in per host: the hosts file's ``rdma`` devices, with
CAP_IPC_LOCK and an unlimited memlock, reach only a multi-node GPU task's container on such
a host; nothing changes elsewhere."""

import pytest
from pydantic import ValidationError

from orchestrator.executors.container import task_container
from orchestrator.executors.docker import create_kwargs
from orchestrator.spec import GPU, HostSpec, ImageSpec, SuiteRef, Task

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
