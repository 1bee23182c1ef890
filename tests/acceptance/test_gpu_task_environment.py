"""A GPU task's HOME and the caches of MIOpen, Triton, inductor and the kernel JITs are on
the writable /tmp tmpfs; a ROCm GPU task's root file system is writable (MIOpen's WAL-mode
system databases, pytorch/pytorch#126942), every other task's stays read-only. Read back
from the container options each executor builds, from the engine (docker inspect), and
from inside a container started with those options."""

import os
import shutil
import subprocess
import sys

import pytest

from orchestrator.executors.container import GPU_CACHE_ENV, task_container
from orchestrator.executors.docker import container_options
from orchestrator.executors.slurm.executor import create_options
from orchestrator.ext.k8s.executor import job_manifest
from orchestrator.spec import GPU, HostSpec, ImageSpec, SuiteRef, Task
from valorch_probe import sandbox

MI300X = HostSpec(
    name="mi300x",
    slots=1,
    render_gid=109,
    gpus=(GPU(index=0, vendor="amd", arch="gfx942", memory_mib=196592, render_minor=128),),
)
H100 = HostSpec(
    name="h100", slots=1, gpus=(GPU(index=0, vendor="nvidia", arch="sm_90", memory_mib=81559),)
)
CACHES = (
    "MIOPEN_USER_DB_PATH",
    "MIOPEN_CUSTOM_CACHE_DIR",
    "TRITON_CACHE_DIR",
    "TORCHINDUCTOR_CACHE_DIR",
    "XDG_CACHE_HOME",
    "CUDA_CACHE_PATH",
)


def task(backend, host, reference="valorch/test:fake-rocm", cpu_only=False):
    image = ImageSpec(alias=backend, reference=reference, backend=backend)
    return Task(
        image=image, suite=SuiteRef(name="kernels"), host=host, checks=(), cpu_only=cpu_only
    )


@pytest.mark.parametrize("backend,host,writable", [("rocm", MI300X, True), ("cuda", H100, False)])
def test_gpu_tasks_home_and_caches_are_on_the_tmpfs(backend, host, writable):
    opts = container_options(task(backend, host), "run-1")
    env = opts["environment"]
    assert (
        env["HOME"] == "/tmp" and "/tmp" in opts["tmpfs"] and "noexec" not in opts["tmpfs"]["/tmp"]
    )
    for var in CACHES:
        assert env[var].startswith("/tmp/"), var
    assert opts["read_only"] is (not writable)
    # Slurm's docker create flags and the Kubernetes Job carry the same environment
    flags = create_options(task(backend, host), "run-1")
    for var in CACHES:
        assert f"{var}={GPU_CACHE_ENV[var]}" in flags
    job = job_manifest(task(backend, host), "run-1", "j", "ns", "cm")
    kenv = {e["name"]: e["value"] for e in job["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert all(kenv[v] == GPU_CACHE_ENV[v] for v in CACHES)


def test_cpu_tasks_keep_a_read_only_root_and_no_gpu_caches():
    for t in (task("cpu", MI300X), task("rocm", MI300X, cpu_only=True)):
        spec = task_container(t, "run-1")
        assert spec.read_only is True and not any(v in spec.env for v in CACHES)


def test_the_probe_creates_the_caches_and_a_workload_gets_its_own(tmp_path):
    env = {k: v.replace("/tmp", str(tmp_path)) for k, v in GPU_CACHE_ENV.items()}
    code = "from valorch_probe import sandbox; print(sandbox.make_cache_dirs())"
    probe = tmp_path / "probe"
    shutil.copytree(
        os.path.join(os.path.dirname(sandbox.__file__)),
        probe / "valorch_probe",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        env=dict(env, PYTHONPATH=str(probe)),
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.strip() == "[]"
    assert all(os.path.isdir(env[v]) for v in CACHES)
    home = str(tmp_path / "workload-home")
    wenv = dict(env)
    sandbox.rehome(wenv, home)
    assert wenv["HOME"] == home and wenv["MIOPEN_USER_DB_PATH"] == os.path.join(
        home, ".config/miopen"
    )
    assert all(wenv[v].startswith(home + "/") for v in CACHES)


@pytest.mark.docker
def test_engine_gets_what_was_decided(tmp_path):
    docker = pytest.importorskip("docker")
    client = docker.from_env()
    made = []
    try:
        for backend, host, writable in (("rocm", MI300X, True), ("cuda", H100, False)):
            kw = container_options(task(backend, host), "gpu-env-test")
            for key in ("devices", "device_requests", "group_add"):  # no GPU on this machine
                kw.pop(key, None)
            kw["command"] = [
                "sh",
                "-c",
                'mkdir -p "$MIOPEN_USER_DB_PATH" "$TRITON_CACHE_DIR" && '
                'touch "$MIOPEN_USER_DB_PATH/x" "$TRITON_CACHE_DIR/x" && '
                "(touch /opt/rocm/valorch-probe 2>/dev/null && echo root-writable || echo root-ro)",
            ]
            kw["detach"] = True
            c = client.containers.create("valorch/test:fake-rocm", **kw)
            made.append(c)
            c.reload()
            hc = c.attrs["HostConfig"]
            assert hc["ReadonlyRootfs"] is (not writable)
            assert "/tmp" in hc["Tmpfs"]
            env = dict(e.split("=", 1) for e in c.attrs["Config"]["Env"])
            assert env["HOME"] == "/tmp" and all(env[v] == GPU_CACHE_ENV[v] for v in CACHES)
            c.start()
            assert c.wait(timeout=120)["StatusCode"] == 0
            said = c.logs().decode().strip()
            assert said == ("root-writable" if writable else "root-ro")
    finally:
        for c in made:
            c.remove(force=True, v=True)
