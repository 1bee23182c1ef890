"""sbatch command lines and batch scripts, without a cluster."""

from __future__ import annotations

import os
import shlex
import subprocess

import pytest

from orchestrator.errors import NoMatchingHostError
from orchestrator.executors.slurm.client import (
    SlurmError,
    SlurmRequirement,
    SlurmUnmatched,
    batch_script,
    constraint,
    run_slurm,
    sbatch_argv,
    time_limit,
)


def opts(argv: list[str]) -> dict[str, str]:
    return dict(a[2:].split("=", 1) for a in argv if a.startswith("--") and "=" in a)


def test_rocm_single_arch() -> None:
    req = SlurmRequirement("rocm", archs=("gfx942",), gpus=1)
    argv = sbatch_argv("smoke/rocm6.3", req, 90, "/shared/w", "/shared/w/job.sbatch")
    assert argv[0] == "sbatch" and "--parsable" in argv and argv[-1] == "/shared/w/job.sbatch"
    o = opts(argv)
    assert o["gres"] == "gpu:1"
    assert o["constraint"] == "rocm&gfx942"
    assert o["time"] == "2"
    assert o["job-name"] == "valorch-smoke-rocm6.3"
    assert o["output"] == "/shared/w/slurm-%j.out"
    assert o["chdir"] == "/shared/w"
    assert "partition" not in o and "--no-requeue" in argv


def test_alternative_archs_are_grouped_and_labels_required() -> None:
    req = SlurmRequirement(
        "rocm", archs=("gfx90a", "gfx942"), gpus=2, labels=("fast", "ib"), gpu_type="mi300x"
    )
    o = opts(sbatch_argv("t", req, 3600, "/w", "/w/s", partition="gpu"))
    assert o["constraint"] == "rocm&fast&ib&(gfx90a|gfx942)"
    assert o["gres"] == "gpu:mi300x:2"
    assert o["partition"] == "gpu"
    assert o["time"] == "60"


def test_cuda_compute_capability_spelling() -> None:
    req = SlurmRequirement("cuda", archs=("9.0", "sm_80", "sm_90"), gpus=1)
    assert req.archs == ("sm_90", "sm_80")
    assert constraint(req) == "cuda&(sm_90|sm_80)"


def test_cpu_job_has_no_gres_and_no_constraint() -> None:
    argv = sbatch_argv("cpu", SlurmRequirement("cpu"), 10, "/w", "/w/s")
    assert not any(a.startswith(("--gres", "--constraint")) for a in argv)
    assert (
        opts(sbatch_argv("cpu", SlurmRequirement("cpu", labels=("big",)), 10, "/w", "/w/s"))[
            "constraint"
        ]
        == "big"
    )


def test_unknown_alternatives_dropped_with_known_features() -> None:
    req = SlurmRequirement("cuda", archs=("sm_80", "sm_90"), gpus=1)
    assert constraint(req, frozenset({"cuda", "sm_90", "rocm", "gfx942"})) == "cuda&sm_90"


@pytest.mark.parametrize(
    "req",
    [
        SlurmRequirement("rocm", archs=("gfx90a",), gpus=1),
        SlurmRequirement("rocm", archs=("gfx942",), gpus=1, labels=("infiniband",)),
        SlurmRequirement("cuda", gpus=1),
    ],
)
def test_unmatched_before_submit(req: SlurmRequirement) -> None:
    with pytest.raises(SlurmUnmatched) as info:
        constraint(req, frozenset({"rocm", "gfx942"}))
    assert isinstance(info.value, NoMatchingHostError) and info.value.exit_code == 3
    assert "gfx942" in str(info.value)  # the hint names what exists


@pytest.mark.parametrize("seconds, minutes", [(1, "1"), (60, "1"), (61, "2"), (7200, "120")])
def test_time_limit_rounds_up_to_minutes(seconds: float, minutes: str) -> None:
    assert time_limit(seconds) == minutes


@pytest.mark.parametrize(
    "kwargs",
    [
        {"backend": "rocm", "gpus": 0},
        {"backend": "cpu", "gpus": 1},
        {"backend": "rocm", "gpus": 1, "archs": ("gfx942|gfx90a",)},
        {"backend": "rocm", "gpus": 1, "labels": ("a&b",)},
        {"backend": "rocm", "gpus": 1, "gpu_type": "mi300x:2"},
        {"backend": "tpu", "gpus": 1},
    ],
)
def test_invalid_requirements(kwargs: dict) -> None:
    with pytest.raises(ValueError):
        SlurmRequirement(**kwargs)


def test_percent_in_workdir_refused() -> None:
    with pytest.raises(ValueError, match="%"):
        sbatch_argv("t", SlurmRequirement("cpu"), 10, "/w/100%", "/w/s")


def run_script(tmp_path, text: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "job.sh"
    path.write_text(text)
    base = {"PATH": os.environ["PATH"], "SLURM_JOB_ID": "7", "SLURMD_NODENAME": "n1"}
    return subprocess.run(
        ["bash", str(path)],
        cwd=tmp_path,
        env={**base, **env},
        capture_output=True,
        text=True,
        timeout=30,
    )


def test_batch_script_quotes_hostile_argv(tmp_path) -> None:
    evil = "$(touch pwned); `touch pwned2` 'q' \"dq\" ; rm -rf / #"
    text = batch_script(["printf", "%s|%s\n", evil, "$HOME"])
    assert text.startswith("#!/bin/bash\n")
    proc = run_script(tmp_path, text + "", {})
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "valorch-7.stdout").read_text() == f"{evil}|$HOME\n"
    assert not (tmp_path / "pwned").exists() and not (tmp_path / "pwned2").exists()


def test_batch_script_maps_slurm_gpus(tmp_path) -> None:
    text = batch_script(
        ["sh", "-c", "echo $VALORCH_GPUS/$ROCR_VISIBLE_DEVICES/$CUDA_VISIBLE_DEVICES"]
    )
    run_script(tmp_path, text, {"SLURM_JOB_GPUS": "1,2"})
    assert (tmp_path / "valorch-7.stdout").read_text() == "1,2/1,2/1,2\n"
    # what Slurm sets itself is kept (device cgroups renumber from 0)
    run_script(
        tmp_path,
        text,
        {"SLURM_JOB_GPUS": "3", "ROCR_VISIBLE_DEVICES": "0", "CUDA_VISIBLE_DEVICES": "0"},
    )
    assert (tmp_path / "valorch-7.stdout").read_text() == "3/0/0\n"
    # a job step without SLURM_JOB_GPUS
    run_script(tmp_path, text, {"SLURM_STEP_GPUS": "5"})
    assert (tmp_path / "valorch-7.stdout").read_text() == "5/5/5\n"
    # no GPUs: nothing invented
    proc = run_script(tmp_path, text, {})
    assert (tmp_path / "valorch-7.stdout").read_text() == "//\n" and "gpus=none" in proc.stderr


def test_batch_script_refuses_an_empty_command() -> None:
    with pytest.raises(ValueError):
        batch_script([])


def test_exit_code_propagates(tmp_path) -> None:
    assert run_script(tmp_path, batch_script(["sh", "-c", "exit 3"]), {}).returncode == 3


def test_run_slurm_errors_are_slurm_errors(tmp_path) -> None:
    with pytest.raises(SlurmError, match="not installed"):
        run_slurm(["valorch-no-such-sbatch"])
    with pytest.raises(SlurmError, match=r"exit 2.*boom"):
        run_slurm(["sh", "-c", "echo boom >&2; exit 2"])
    with pytest.raises(SlurmError, match="within"):
        run_slurm(["sleep", "5"], timeout=0.2)
    assert run_slurm(["sh", "-c", "exit 1"], check=False).returncode == 1
    assert shlex.split(run_slurm(["echo", "a b"]).stdout) == ["a", "b"]


# --- the step's `docker create` options: the docker executor's choices per backend -------------


def _create_task(backend: str, cpu_only: bool = False, commands: tuple = ()):
    from orchestrator.spec import GPU, CommandSpec, HostSpec, ImageSpec, SuiteRef, Task

    host = HostSpec(
        name="slurm",
        slots=1,
        render_gid=109,
        gpus=(
            GPU(
                index=0,
                vendor="amd" if backend == "rocm" else "nvidia",
                arch="gfx942" if backend == "rocm" else "sm_90",
                memory_mib=1,
                render_minor=128,
            ),
        ),
    )
    suite = SuiteRef(
        name="command", commands=tuple(CommandSpec(id=c, argv=("true",)) for c in commands)
    )
    return Task(
        image=ImageSpec(alias=backend, reference=f"valorch/test:{backend}", backend=backend),
        suite=suite,
        host=host,
        checks=(),
        cpu_only=cpu_only,
    )


def _flag_values(flags: list[str], name: str) -> list[str]:
    return [flags[i + 1] for i, f in enumerate(flags[:-1]) if f == name]


@pytest.mark.parametrize(
    "backend, cpu_only, commands",
    [
        ("cpu", False, ()),
        ("rocm", False, ()),
        ("cuda", False, ()),
        ("rocm", True, ()),
        ("cuda", True, ()),
        ("cpu", False, ("a",)),
        ("rocm", False, ("a",)),
    ],
)
def test_create_options_match_the_docker_executor_per_backend(
    backend: str, cpu_only: bool, commands: tuple
) -> None:
    from orchestrator.executors.container import UNPRIVILEGED
    from orchestrator.executors.docker import container_options
    from orchestrator.executors.slurm.executor import create_options

    task = _create_task(backend, cpu_only, commands)
    flags = create_options(task, "run-1")
    docker = container_options(task, "run-1")
    # the same user: 65534 for a CPU (or --cpu-only) task with no workload, the image's (uid 0) otherwise
    assert _flag_values(flags, "--user") == ([docker["user"]] if "user" in docker else [])
    gpu = backend != "cpu" and not cpu_only
    assert _flag_values(flags, "--user") == ([] if gpu or commands else [UNPRIVILEGED])
    # the same capabilities and environment
    assert [f for f in flags if f.startswith("--cap-")] == (
        [f"--cap-drop={c}" for c in docker["cap_drop"]]
        + [f"--cap-add={c}" for c in docker["cap_add"]]
    )
    env = dict(v.split("=", 1) for v in _flag_values(flags, "-e"))
    assert env == docker["environment"]
    assert (
        env.get("HOME") == (None if commands and not gpu else "/tmp")
        and ("MIOPEN_USER_DB_PATH" in env) is gpu
    )
    # no device here: the step adds the devices Slurm assigned on the node
    assert not _flag_values(flags, "--device") and "--gpus" not in flags
    assert _flag_values(flags, "--shm-size") == (["8g"] if gpu else [])
    assert "seccomp=unconfined" not in _flag_values(flags, "--security-opt")
