"""`valorch run --profiling-caps` (or `profiling_caps: true` on a job's profiler suite) adds
CAP_SYS_ADMIN to the profiler suite's GPU containers only, for Nsight Compute's performance
counters (ERR_NVGPUCTRPERM); every other suite's container, and every container without the
flag, keeps the default capability set. Read back from the engine with `docker inspect` and
from inside the container (/proc/self/status CapEff), for the suites as the real CLI stored them."""

import json
import sqlite3

import pytest

from orchestrator.executors.docker import container_options
from orchestrator.executors.slurm.executor import create_options
from orchestrator.ext.k8s.executor import job_manifest
from orchestrator.spec import GPU, HostSpec, ImageSpec, JobSpec, SuiteRef, Task

IMAGE = "cpu_debian12_py3.11_pytorch_2.13"
CAP_SYS_ADMIN = 1 << 21  # linux/capability.h
MI300X = HostSpec(
    name="mi300x",
    slots=1,
    render_gid=109,
    gpus=(GPU(index=0, vendor="amd", arch="gfx942", memory_mib=196592, render_minor=128),),
)
H100 = HostSpec(
    name="h100", slots=1, gpus=(GPU(index=0, vendor="nvidia", arch="sm_90", memory_mib=81559),)
)


def stored_suites(db) -> dict[str, dict]:
    with sqlite3.connect(db) as con:
        rows = con.execute("SELECT suite, suite_spec FROM task").fetchall()
    return {name: json.loads(spec) if isinstance(spec, str) else spec for name, spec in rows}


def gpu_task(suite: SuiteRef, backend: str, cpu_only: bool = False) -> Task:
    image = ImageSpec(alias=backend, reference="valorch/test:fake-rocm", backend=backend)
    return Task(
        image=image,
        suite=suite,
        host=MI300X if backend == "rocm" else H100,
        checks=(),
        cpu_only=cpu_only,
    )


def test_the_flag_without_a_profiler_suite_is_exit_2(cli):
    proc = cli("run", "--image", IMAGE, "--suite", "smoke", "--profiling-caps")
    assert proc.returncode == 2, proc.stderr
    assert (
        "--profiling-caps applies to the profiler suite" in proc.stderr
        and "--suite profiler" in proc.stderr
    )
    assert "Traceback" not in proc.stderr


def test_the_job_key_on_another_suite_is_exit_2_naming_file_and_key(cli, tmp_path):
    job = tmp_path / "job.yaml"
    job.write_text(
        f"name: caps\nimages: [{IMAGE}]\nsuites:\n  - name: smoke\n    profiling_caps: true\n"
    )
    proc = cli("run", "--job", str(job))
    assert proc.returncode == 2, proc.stderr
    assert (
        "job.yaml" in proc.stderr and "profiling_caps" in proc.stderr and "profiler" in proc.stderr
    )
    assert "Traceback" not in proc.stderr


def test_the_spec_hash_is_unchanged_when_the_key_is_unset():
    plain = JobSpec(name="j", images=("a",), suites=(SuiteRef(name="profiler"),))
    assert (
        JobSpec(
            name="j", images=("a",), suites=(SuiteRef(name="profiler", profiling_caps=False),)
        ).spec_hash
        == plain.spec_hash
    )
    assert (
        JobSpec(
            name="j", images=("a",), suites=(SuiteRef(name="profiler", profiling_caps=True),)
        ).spec_hash
        != plain.spec_hash
    )


@pytest.mark.docker
def test_only_the_profiler_suites_gpu_container_gets_sys_admin(cli):
    docker = pytest.importorskip("docker")
    # the real CLI: the flag reaches the profiler suite of the run, not the smoke suite beside it
    proc = cli(
        "run",
        "--image",
        IMAGE,
        "--suite",
        "profiler",
        "--suite",
        "smoke",
        "--profiling-caps",
        "--check",
        "profiler.torch_profiler.cpu_ops",
        "--check",
        "smoke.matmul.fp32",
        "--no-matrix",
    )
    assert proc.returncode == 0, proc.stderr
    suites = {name: SuiteRef.model_validate(spec) for name, spec in stored_suites(cli.db).items()}
    assert suites["profiler"].profiling_caps is True and suites["smoke"].profiling_caps is False
    plain = suites["profiler"].model_copy(update={"profiling_caps": False})
    client = docker.from_env()
    cases = [  # (task, gets SYS_ADMIN)
        (gpu_task(suites["profiler"], "cuda"), True),
        (gpu_task(suites["profiler"], "rocm"), True),
        (gpu_task(plain, "cuda"), False),  # no flag
        (gpu_task(suites["smoke"], "cuda"), False),  # another suite of the same run
        (gpu_task(suites["smoke"], "rocm"), False),
        (gpu_task(suites["profiler"], "cuda", cpu_only=True), False),  # no GPU: no counters to read
    ]
    for task, wanted in cases:
        what = f"{task.suite.name} {task.image.backend} caps={task.suite.profiling_caps} cpu_only={task.cpu_only}"
        kw = container_options(task, "profiling-caps-test")
        for key in ("devices", "device_requests", "group_add"):  # no GPU on this machine
            kw.pop(key, None)
        kw["command"] = ["sh", "-c", "grep CapEff /proc/self/status"]
        c = client.containers.create("valorch/test:fake-rocm", **kw)
        try:
            c.start()
            assert c.wait(timeout=120)["StatusCode"] == 0, what
            cap_eff = int(c.logs(stdout=True, stderr=False).decode().split()[1], 16)
            host = client.api.inspect_container(c.id)["HostConfig"]
        finally:
            c.remove(force=True, v=True)
        assert host["CapDrop"] == ["ALL"] and host["Privileged"] is False, what
        assert ("SYS_ADMIN" in (host["CapAdd"] or [])) is wanted, (what, host["CapAdd"])
        assert bool(cap_eff & CAP_SYS_ADMIN) is wanted, (what, hex(cap_eff))
        # the Slurm step and the Kubernetes Job make the same choice
        assert ("--cap-add=SYS_ADMIN" in create_options(task, "r")) is wanted, what
        sec = job_manifest(task, "r", "j", "ns", "cm")["spec"]["template"]["spec"]["containers"][0][
            "securityContext"
        ]
        assert (sec["capabilities"].get("add") == ["SYS_ADMIN"]) is wanted, what
