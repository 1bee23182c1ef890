"""The layering of docs/design.md and docs/architecture.md ("Layers"): every command module
is in the independence contract (import-linter itself runs in `make lint`, before the
tests), the executor registry drives every executor, and an image's archs limit placement."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from orchestrator import executors
from orchestrator.catalog.core import Catalog
from orchestrator.errors import NoMatchingHostError
from orchestrator.hosts.match import Requirement, match
from orchestrator.spec import GPU, Backend, HostSpec, ImageSpec, JobSpec, SuiteRef

ROOT = Path(__file__).resolve().parents[2]


SHARED_CLI_MODULES = {
    "__init__",
    "common",
    "flags",
    "helptext",
    "inert",
    "placing",
    "progress",
    "renamed",
    "signals",
    "tables",
    "terminal",
}


def test_every_command_module_is_in_the_independence_contract() -> None:
    """A new command module is independent of the others (pyproject's independence contract)
    unless it is one of the shared CLI modules."""
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    (contract,) = [
        c
        for c in config["tool"]["importlinter"]["contracts"]
        if c["name"].startswith("Commands are independent")
    ]
    listed = set(contract["modules"])
    present = {
        f"orchestrator.commands.{p.stem}"
        for p in (ROOT / "orchestrator" / "commands").glob("*.py")
        if p.stem not in SHARED_CLI_MODULES
    }
    # the satellites' commands (orchestrator/ext/<name>/command.py) are commands too
    present |= {
        f"orchestrator.ext.{p.parent.name}.command"
        for p in (ROOT / "orchestrator" / "ext").glob("*/command.py")
    }
    assert present == listed


def test_backend_vocabulary() -> None:
    assert (
        Backend("rocm").vendor == "amd"
        and Backend.cuda.vendor == "nvidia"
        and Backend.cpu.vendor is None
    )
    assert f"{Backend.rocm}" == "rocm" and str(Backend.cuda) == "cuda" and Backend.rocm == "rocm"


MI250 = HostSpec(
    name="mi250",
    endpoint="unix:///x",
    gpus=(GPU(vendor="amd", arch="gfx90a", index=0, render_minor=128),),
)
MI300 = HostSpec(
    name="mi300",
    endpoint="unix:///x",
    gpus=(GPU(vendor="amd", arch="gfx942", index=0, render_minor=128),),
)
GFX90A_ONLY = ImageSpec(
    alias="old", reference="rocm/pytorch:old", backend="rocm", archs=("gfx90a",)
)


def test_image_archs_limit_matching() -> None:
    with pytest.raises(NoMatchingHostError) as exc:
        match(Requirement.of(GFX90A_ONLY), (MI300,), image="old")
    assert (
        exc.value.exit_code == 3 and "gfx90a" in exc.value.message and "mi300" in exc.value.message
    )
    assert match(Requirement.of(GFX90A_ONLY), (MI300, MI250)) == (MI250,)


def _host_cli(tmp_path: Path, arch: str) -> subprocess.CompletedProcess[str]:
    images = tmp_path / "images"
    images.mkdir(exist_ok=True)
    (images / "rocm.yaml").write_text(
        "family: rocm\nbackend: rocm\nimages:\n  - alias: old_gfx90a\n    reference: rocm/pytorch:old\n    archs: [gfx90a]\n"
    )
    hosts = tmp_path / f"hosts-{arch}.yaml"
    hosts.write_text(
        f"hosts:\n  - name: box-{arch}\n    endpoint: unix:///nonexistent.sock\n"
        f"    gpus:\n      - {{vendor: amd, arch: {arch}, index: 0, render_minor: 128}}\n"
    )
    return subprocess.run(
        [
            sys.executable,
            "-c",
            "from orchestrator.cli import app; app()",
            "run",
            "--image",
            "old_gfx90a",
            "--hosts",
            str(hosts),
            "--catalog",
            str(images),
            "--db",
            str(tmp_path / "v.sqlite"),
            "--json",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        # the test run's own PYTHONPATH after ROOT: the packages it was given (typer's range)
        env={
            "PYTHONPATH": os.pathsep.join([str(ROOT), *_inherited_path()]),
            "PATH": "/usr/bin:/bin",
        },
    )


def _inherited_path() -> list[str]:
    return [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]


def test_archs_from_the_catalog_reach_placement_through_the_cli(tmp_path: Path) -> None:
    done = _host_cli(tmp_path, "gfx942")
    assert done.returncode == 3, done.stderr
    assert (
        "box-gfx942" in done.stderr and "gfx90a" in done.stderr and "Traceback" not in done.stderr
    )
    # on a gfx90a host it is placed (then the engine is unreachable: an infrastructure error, not a match error)
    done = _host_cli(tmp_path, "gfx90a")
    assert "no host can run" not in done.stderr and "Traceback" not in done.stderr


def test_every_registered_executor_loads_and_kubernetes_runs_through_the_registry(
    monkeypatch,
) -> None:
    assert executors.NAMES == ("host", "docker", "slurm", "kubernetes")
    for name in executors.NAMES:
        module, _, attr = executors.REGISTRY[name].partition(":")
        cls = getattr(importlib.import_module(module), attr)
        assert cls.name == name and callable(cls.execute)
    pytest.importorskip("kubernetes")
    from orchestrator.ext.k8s.plan import plan_on_kubernetes

    cat = Catalog.load(ROOT / "images")
    job = JobSpec(
        name="k",
        images=("rocm6.3_ubuntu24.04_py3.12_pytorch_2.4",),
        suites=(SuiteRef(name="smoke"),),
        labels=("gfx942",),
    )
    local = HostSpec(name="here", endpoint="unix:///x")
    planned = plan_on_kubernetes(job, cat, local)
    assert len(planned) == 1 and planned[0].host.name == "kubernetes-default"
    k8s = executors.create(
        "kubernetes",
        namespace="valorch-test",
        node_labels=job.labels,
        api_client=object(),
        schedule_timeout=1,
    )
    task = planned[0].tasks[0]
    # the registry's executor builds the Job the cluster would get (no live cluster here: docs/kubernetes.md)
    from orchestrator.ext.k8s.executor import job_manifest, object_name

    name = object_name(task.image.alias, task.suite.name, "run-1")
    manifest = job_manifest(task, "run-1", name, k8s.namespace, name, k8s.node_labels)
    limits = manifest["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]
    assert limits == {"amd.com/gpu": "1"}
