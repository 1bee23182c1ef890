"""Kubernetes manifests (no cluster here): checked against the official client's
models (a round trip through V1Job / V1ConfigMap drops unknown fields and
rejects wrong types) and against a schema of the fields valorch relies on."""

from __future__ import annotations

import copy
import json
import math
import re
from pathlib import Path

import pytest

from orchestrator.catalog.core import Catalog
from orchestrator.executors.base import PROBE_DIR, overall_timeout
from orchestrator.ext.k8s.executor import (
    AMD_DEVICE_ID,
    MOUNT,
    NV_MAJOR,
    NV_MINOR,
    KubernetesUnmatched,
    configmap_manifest,
    job_manifest,
    object_name,
    probe_items,
)
from orchestrator.scheduling.plan import suite_checks
from orchestrator.spec import HostSpec, SuiteRef, Task

kubernetes = pytest.importorskip("kubernetes", reason="pip install 'valorch[k8s]'")
from kubernetes.client import ApiClient

ROOT = Path(__file__).resolve().parents[2]
CATALOG = Catalog.load(ROOT / "images")
ROCM = "rocm6.3_ubuntu24.04_py3.12_pytorch_2.4"
NAME = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")

# The fields valorch relies on, and their constraints.
JOB_SCHEMA = {
    "type": "object",
    "required": ["apiVersion", "kind", "metadata", "spec"],
    "properties": {
        "apiVersion": {"const": "batch/v1"},
        "kind": {"const": "Job"},
        "metadata": {
            "type": "object",
            "required": ["name", "namespace", "labels"],
            "properties": {
                "name": {"type": "string", "pattern": NAME.pattern, "maxLength": 63},
                "labels": {"type": "object", "required": ["org.valorch", "org.valorch.run"]},
            },
        },
        "spec": {
            "type": "object",
            "required": [
                "backoffLimit",
                "activeDeadlineSeconds",
                "ttlSecondsAfterFinished",
                "template",
            ],
            "properties": {
                "backoffLimit": {"const": 0},
                "activeDeadlineSeconds": {"type": "integer", "minimum": 1},
                "ttlSecondsAfterFinished": {"type": "integer", "minimum": 0},
                "template": {
                    "type": "object",
                    "required": ["metadata", "spec"],
                    "properties": {
                        "spec": {
                            "type": "object",
                            "required": ["restartPolicy", "containers", "volumes"],
                            "properties": {
                                "restartPolicy": {"const": "Never"},
                                "automountServiceAccountToken": {"const": False},
                                "containers": {
                                    "type": "array",
                                    "minItems": 1,
                                    "maxItems": 1,
                                    "items": {
                                        "type": "object",
                                        "required": [
                                            "name",
                                            "image",
                                            "command",
                                            "securityContext",
                                            "volumeMounts",
                                        ],
                                        "properties": {
                                            "command": {
                                                "type": "array",
                                                "items": {"type": "string"},
                                            },
                                            "securityContext": {
                                                "type": "object",
                                                "required": ["allowPrivilegeEscalation"],
                                                "properties": {
                                                    "allowPrivilegeEscalation": {"const": False}
                                                },
                                            },
                                        },
                                    },
                                },
                            },
                        }
                    },
                },
            },
        },
    },
}


def validate(obj, schema, path="$"):
    """The subset of JSON Schema used above (type, const, required, properties,
    items, min/maxItems, minimum, pattern, maxLength)."""
    types = {"object": dict, "array": list, "string": str, "integer": int}
    if "const" in schema:
        assert obj == schema["const"] and type(obj) is type(schema["const"]), (
            f"{path}: {obj!r} != {schema['const']!r}"
        )
    if "type" in schema:
        assert isinstance(obj, types[schema["type"]]) and not isinstance(obj, bool), (
            f"{path}: not {schema['type']}"
        )
    for key in schema.get("required", ()):
        assert key in obj, f"{path}: missing {key}"
    for key, sub in schema.get("properties", {}).items():
        if key in obj:
            validate(obj[key], sub, f"{path}.{key}")
    if "items" in schema:
        assert schema.get("minItems", 0) <= len(obj) <= schema.get("maxItems", 1 << 30), (
            f"{path}: item count"
        )
        for i, item in enumerate(obj):
            validate(item, schema["items"], f"{path}[{i}]")
    if "minimum" in schema:
        assert obj >= schema["minimum"], f"{path}: {obj} < {schema['minimum']}"
    if "pattern" in schema:
        assert re.match(schema["pattern"], obj), (
            f"{path}: {obj!r} does not match {schema['pattern']}"
        )
    if "maxLength" in schema:
        assert len(obj) <= schema["maxLength"], f"{path}: longer than {schema['maxLength']}"


def task(alias: str, suite: SuiteRef | None = None, cpu_only: bool = False) -> Task:
    suite = suite or SuiteRef(name="smoke")
    return Task(
        image=CATALOG.resolve(alias),
        suite=suite,
        host=HostSpec(name="k8s"),
        checks=suite_checks(suite),
        cpu_only=cpu_only,
    )


def round_trip(manifest: dict, kind: str) -> dict:
    api = ApiClient()
    return api.sanitize_for_serialization(
        api.deserialize(json.dumps(manifest), kind, "application/json")
    )


def pod(manifest: dict) -> dict:
    return manifest["spec"]["template"]["spec"]


def test_rocm_job_is_a_valid_v1job_with_amd_gpu_and_arch_affinity() -> None:
    t = task(ROCM)
    name = object_name(ROCM, "smoke", "0b5c1e5a-7d43-4b4f-9a53-1f6f0b1d2c3e")
    m = job_manifest(
        t, "0b5c1e5a-7d43-4b4f-9a53-1f6f0b1d2c3e", name, "validation", name, ("gfx942", "ib=ndr")
    )
    assert round_trip(m, "V1Job") == m  # every field is known to the model, with the right type
    validate(m, JOB_SCHEMA)
    container = pod(m)["containers"][0]
    assert container["resources"] == {"limits": {"amd.com/gpu": "1"}}
    assert container["image"] == CATALOG.resolve(ROCM).reference
    assert container["command"][:3] == ["python3", "-m", "valorch_probe"]
    assert m["spec"]["activeDeadlineSeconds"] == math.ceil(overall_timeout(t))
    assert "seccompProfile" not in container["securityContext"]  # ROCm needs unconfined syscalls
    [term] = pod(m)["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
        "nodeSelectorTerms"
    ]
    by_key = {e["key"]: e for e in term["matchExpressions"]}
    assert "74a1" in by_key[AMD_DEVICE_ID]["values"]  # MI300X
    assert by_key["ib"] == {"key": "ib", "operator": "In", "values": ["ndr"]}
    assert m["metadata"]["labels"]["org.valorch.run"] == "0b5c1e5a-7d43-4b4f-9a53-1f6f0b1d2c3e"
    shm = next(v for v in pod(m)["volumes"] if v["name"] == "dshm")
    assert shm["emptyDir"]["medium"] == "Memory"


def test_cuda_arch_alternatives_are_ored_terms_of_compute_capability() -> None:
    alias = next(i.alias for i in CATALOG.images if i.backend == "cuda")
    m = job_manifest(
        task(alias), "run", "valorch-cuda", "default", "valorch-cuda", ("sm_80", "sm_90")
    )
    assert round_trip(m, "V1Job") == m
    assert pod(m)["containers"][0]["resources"] == {"limits": {"nvidia.com/gpu": "1"}}
    terms = pod(m)["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
        "nodeSelectorTerms"
    ]
    caps = [{e["key"]: e["values"][0] for e in t["matchExpressions"]} for t in terms]
    assert caps == [{NV_MAJOR: "8", NV_MINOR: "0"}, {NV_MAJOR: "9", NV_MINOR: "0"}]
    assert pod(m)["containers"][0]["securityContext"]["seccompProfile"] == {
        "type": "RuntimeDefault"
    }


def test_cpu_only_and_cpu_images_ask_for_no_gpu() -> None:
    for t in (task(ROCM, cpu_only=True), task("cpu_debian12_py3.11_pytorch_2.13")):
        m = job_manifest(t, "run", "valorch-cpu", "default", "valorch-cpu", ("gfx942",))
        assert round_trip(m, "V1Job") == m
        assert pod(m)["containers"][0]["resources"] == {}
        assert "affinity" not in pod(m)
    local = job_manifest(
        task("cpu_debian12_py3.11_pytorch_2.13"), "r", "valorch-l", "default", "valorch-l"
    )
    assert pod(local)["containers"][0]["imagePullPolicy"] == "Never"  # built locally, never pulled


def test_unknown_arch_is_unmatched() -> None:
    with pytest.raises(KubernetesUnmatched, match="gfx1234"):
        job_manifest(task(ROCM), "run", "valorch-x", "default", "valorch-x", ("gfx1234",))


def test_probe_configmap_holds_every_probe_file_and_mounts_them_back() -> None:
    t = task(ROCM)
    cm = configmap_manifest("valorch-x", "default", t, "run")
    assert round_trip(cm, "V1ConfigMap") == cm
    files = sorted(p.relative_to(PROBE_DIR).as_posix() for p in PROBE_DIR.rglob("*.py"))
    items = probe_items()
    assert sorted(i["path"] for i in items) == files
    assert all(re.match(r"^[-._a-zA-Z0-9]+$", key) for key in cm["data"])  # ConfigMap key syntax
    assert {i["key"] for i in items} == set(cm["data"])
    assert cm["data"]["checks__smoke.py"] == (PROBE_DIR / "checks" / "smoke.py").read_text()
    assert len(json.dumps(cm["data"]).encode()) < 1 << 20  # a ConfigMap holds at most 1 MiB
    m = job_manifest(t, "run", "valorch-x", "default", "valorch-x")
    [mount] = [v for v in pod(m)["containers"][0]["volumeMounts"] if v["name"] == "probe"]
    assert mount == {"name": "probe", "mountPath": MOUNT, "readOnly": True}


def test_a_typo_in_a_manifest_would_be_caught_by_the_round_trip() -> None:
    m = job_manifest(task(ROCM), "run", "valorch-x", "default", "valorch-x")
    bad = copy.deepcopy(m)
    bad["spec"]["backofLimit"] = 0
    assert round_trip(bad, "V1Job") != bad
    with pytest.raises(AssertionError, match="backoffLimit"):
        validate(
            {**m, "spec": {k: v for k, v in m["spec"].items() if k != "backoffLimit"}}, JOB_SCHEMA
        )


def test_object_names_are_dns_labels_and_distinct() -> None:
    a = object_name("rocm6.3_ubuntu24.04_py3.12_pytorch_2.4" * 3, "kernels", "run-1")
    b = object_name("rocm6.3_ubuntu24.04_py3.12_pytorch_2.4" * 3, "kernels", "run-2")
    assert a != b and all(NAME.match(n) and len(n) <= 63 for n in (a, b))
