"""A multi-node task's Kubernetes objects: an Indexed Job of N pods and a headless Service,
each a round trip through the official client's models (V1Job, V1Service) unchanged. No
live cluster is available here (docs/kubernetes.md says so)."""

import json
from pathlib import Path

import pytest

from orchestrator.catalog.core import Catalog
from orchestrator.ext.k8s.executor import (
    INDEX,
    gang_job,
    job_manifest,
    labels,
    object_name,
    service_manifest,
)
from orchestrator.scheduling.plan import suite_checks
from orchestrator.spec import HostSpec, SuiteRef, Task

kubernetes = pytest.importorskip("kubernetes", reason="pip install 'valorch[k8s]'")
from kubernetes.client import ApiClient

ROOT = Path(__file__).resolve().parents[2]
RUN = "0b5c1e5a-7d43-4b4f-9a53-1f6f0b1d2c3e"


def round_trip(manifest, kind):
    api = ApiClient()
    return api.sanitize_for_serialization(
        api.deserialize(json.dumps(manifest), kind, "application/json")
    )


@pytest.mark.parametrize(
    "alias,nodes,gpus",
    [
        ("cpu_debian12_py3.11_pytorch_1.13", 2, None),
        ("rocm6.3_ubuntu24.04_py3.12_pytorch_2.4", 4, 8),
    ],
)
def test_indexed_job_and_headless_service_are_valid_models(alias, nodes, gpus):
    suite = SuiteRef(name="multinode", nodes=nodes, gpus_per_node=gpus)
    hosts = tuple(HostSpec(name=f"n{i}") for i in range(nodes))
    task = Task(
        image=Catalog.load(ROOT / "images").resolve(alias),
        suite=suite,
        host=hosts[0],
        checks=suite_checks(suite),
        nodes=hosts,
    )
    name = object_name(alias, "multinode", RUN)
    job = gang_job(
        job_manifest(task, RUN, name, "validation", name, gpus=gpus or 1), task, name, "validation"
    )
    assert round_trip(job, "V1Job") == job
    spec = job["spec"]
    assert (
        spec["completionMode"],
        spec["completions"],
        spec["parallelism"],
        spec["backoffLimit"],
    ) == ("Indexed", nodes, nodes, 0)
    pod = spec["template"]["spec"]
    assert pod["subdomain"] == name
    anti = pod["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][0]
    assert anti["topologyKey"] == "kubernetes.io/hostname"  # one pod per node
    env = {e["name"]: e.get("value", e.get("valueFrom")) for e in pod["containers"][0]["env"]}
    assert env["MASTER_ADDR"] == f"{name}-0.{name}.validation.svc" and env["WORLD_SIZE"] == str(
        nodes
    )
    assert env["RANK"] == {"fieldRef": {"fieldPath": INDEX}} and env["LOCAL_RANK"] == "0"
    if gpus:
        assert pod["containers"][0]["resources"] == {"limits": {"amd.com/gpu": "8"}}
    svc = service_manifest(name, "validation", labels(task, RUN))
    assert round_trip(svc, "V1Service") == svc
    assert svc["spec"]["clusterIP"] == "None" and svc["spec"]["selector"] == {"job-name": name}
