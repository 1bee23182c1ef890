"""Faults and lockdown, without an engine: container limits and capabilities,
OOM detection, the SIGTERM edge, spill files, a full database, JUnit on errors."""

import os
import re
import signal

import pytest
import typer
from sqlalchemy.engine import make_url

from orchestrator.executors.container import PROBE_CAPS, Limits, task_container
from orchestrator.executors.docker import container_options
from orchestrator.executors.limits import FLOOR, limits_for, parse_size
from orchestrator.render.junit import error_junit
from orchestrator.spec import GPU, Execution, HostSpec, ImageSpec, JobSpec, SuiteRef, Task
from orchestrator.store import full, spill
from valorch_probe import memory

IMG = ImageSpec(alias="b", reference="valorch/base:bookworm", backend="cpu")
CPU_HOST = HostSpec(name="cpu", slots=4)
GPU_HOST = HostSpec(
    name="gpu",
    slots=1,
    gpus=tuple(GPU(index=i, vendor="nvidia", arch="sm_90", memory_mib=81559) for i in range(8)),
)


def _task(host=CPU_HOST, **suite):
    return Task(image=IMG, suite=SuiteRef(name="selftest", **suite), host=host, checks=())


def test_parse_size():
    assert (
        parse_size("512m") == 512 << 20
        and parse_size("2g") == 2 << 30
        and parse_size("1.5G") == 3 << 29
    )
    assert parse_size("2GiB") == 2 << 30 and parse_size(str(64 << 20)) == 64 << 20
    for bad in ("lots", "1024", "0", "65t"):  # 1024 bytes and 0 are no container limit
        with pytest.raises(ValueError):
            parse_size(bad)


def test_limits_default_to_a_share_of_the_engine():
    total = 64 << 30
    lim = limits_for(_task(), total, 16)  # 4 CPU slots: a quarter each of 90 %
    assert lim.memory == int(total * 0.9) // 4 and lim.cpus == 4.0
    gpu = limits_for(_task(GPU_HOST), 2048 << 30, 192)  # 8 GPUs + 1 slot: 9 tasks at once
    assert gpu.memory == int((2048 << 30) * 0.9) // 9 and gpu.memory > 200 << 30  # not starved
    assert gpu.cpus == round(192 / 9, 2)
    small = limits_for(
        _task(HostSpec(name="ci", slots=8)), 4 << 30, 2
    )  # a small CI machine: the floor
    assert small.memory == FLOOR and small.cpus == 1.0
    assert limits_for(_task(), None, None) == Limits()


def test_suite_limits_win_over_the_host_and_the_default():
    host = CPU_HOST.model_copy(update={"container_memory": "8g", "container_cpus": 2.0})
    assert limits_for(_task(host), 64 << 30, 16) == Limits(8 << 30, 2.0)
    assert limits_for(_task(host, memory="256m", cpus=0.5), 64 << 30, 16) == Limits(256 << 20, 0.5)


def test_limit_keys_are_validated():
    with pytest.raises(ValueError):
        SuiteRef(name="smoke", memory="a lot")
    with pytest.raises(ValueError):
        SuiteRef(name="smoke", cpus=0)
    with pytest.raises(ValueError):
        HostSpec(name="h", container_memory="-1g")


def test_limits_leave_fingerprints_and_spec_hashes_unchanged():
    assert (
        CPU_HOST.model_copy(update={"container_memory": "8g"}).fingerprint == CPU_HOST.fingerprint
    )
    job = JobSpec(name="j", images=("b",), suites=(SuiteRef(name="smoke"),))
    # the hash main computed before the limit keys existed (a job's identity across versions)
    import hashlib
    import json

    dump = job.model_dump(mode="json")
    for suite in dump["suites"]:
        del (
            suite["memory"],
            suite["cpus"],
            suite["profiling_caps"],
            suite["nodes"],
            suite["gpus_per_node"],
            suite["pass_env"],
            suite["tier"],
            suite["budget"],
        )  # keys added later
    assert (
        job.spec_hash == hashlib.sha256(json.dumps(dump, sort_keys=True).encode()).hexdigest()[:16]
    )
    limited = JobSpec(name="j", images=("b",), suites=(SuiteRef(name="smoke", memory="1g"),))
    assert limited.spec_hash != job.spec_hash


def test_container_options_drop_every_capability_but_the_probes():
    from orchestrator.executors.container import UNPRIVILEGED
    from orchestrator.spec import CommandSpec

    # a task that declares no workload: no capability at all and, on the CPU, not root either
    opts = container_options(_task(), "run-1", Limits(1 << 30, 1.5))
    assert (
        opts["cap_drop"] == ["ALL"]
        and opts["cap_add"] == []
        and opts["user"] == UNPRIVILEGED == "65534:65534"
    )
    assert opts["environment"]["HOME"] == "/tmp"
    # declared workloads run as 65534 apart from the probe: root keeps only what switching uid needs
    work = Task(
        image=IMG,
        suite=SuiteRef(name="command", commands=(CommandSpec(id="a", argv=("true",)),)),
        host=CPU_HOST,
        checks=(),
    )
    wopts = container_options(work, "run-1", Limits(1 << 30, 1.5))
    assert (
        wopts["cap_add"] == list(PROBE_CAPS) == ["SETUID", "SETGID", "CHOWN"]
        and "user" not in wopts
    )
    assert (
        opts["mem_limit"] == opts["memswap_limit"] == 1 << 30 and opts["nano_cpus"] == 1_500_000_000
    )
    assert opts["read_only"] is True and set(opts["tmpfs"]) == {"/tmp", "/var/tmp"}
    assert opts["mounts"][0]["Target"] == "/opt/valorch" and opts["mounts"][0]["Type"] == "volume"
    flags = task_container(work, "run-1", Limits(1 << 30, 1.5)).docker_flags()
    assert "--cap-drop=ALL" in flags and "--cap-add=SETUID" in flags
    assert (
        flags[flags.index("--memory") + 1] == str(1 << 30)
        and flags[flags.index("--cpus") + 1] == "1.5"
    )


def test_oom_is_named_only_when_the_kill_count_rose(monkeypatch):
    counts = iter([3])
    monkeypatch.setattr(memory, "oom_kills", lambda: next(counts))
    monkeypatch.setattr(memory, "limit_text", lambda: "the container's memory limit of 128 MiB")
    assert (
        memory.killed_for_memory(2, -9)
        == "killed: out of memory (the container's memory limit of 128 MiB)"
    )
    monkeypatch.setattr(memory, "oom_kills", lambda: 2)
    assert memory.killed_for_memory(2, 137) is None  # killed, but not by the OOM killer
    assert memory.killed_for_memory(2, 1) is None and memory.killed_for_memory(None, -9) is None


def test_sigterm_is_exit_143_and_sigint_130():
    from orchestrator.commands.signals import interruptible

    before = signal.getsignal(signal.SIGTERM)
    with pytest.raises(typer.Exit) as exc, interruptible():
        os.kill(os.getpid(), signal.SIGTERM)
        signal.pause()
    assert exc.value.exit_code == 143 and signal.getsignal(signal.SIGTERM) is before
    with pytest.raises(typer.Exit) as exc, interruptible():
        os.kill(os.getpid(), signal.SIGINT)
        signal.pause()
    assert exc.value.exit_code == 130


def test_full_database_message_names_it_and_its_free_space(tmp_path):
    url = make_url(f"sqlite:///{tmp_path / 'v.sqlite'}")
    err = full.storage_full(url)
    assert (
        err.exit_code == 3
        and str(tmp_path / "v.sqlite") in err.message
        and "MiB free of" in err.message
    )
    import sqlite3

    assert full.is_full(sqlite3.OperationalError("database or disk is full"))
    assert not full.is_full(sqlite3.OperationalError("database is locked"))


def test_spill_falls_back_and_is_found_again(tmp_path, monkeypatch):
    db = tmp_path / "ro" / "v.sqlite"
    db.parent.mkdir()
    (db.parent / "v.sqlite.spill").write_text(
        "a file where the directory would go"
    )  # beside: unusable
    monkeypatch.setenv("VALORCH_SPILL_DIR", str(tmp_path / "spill"))
    url = make_url(f"sqlite:///{db}")
    task = _task()
    execution = Execution(results=(), exit_code=0)
    path = spill.write(url, "batch-1", "run-1", 7, task, execution)
    assert path == tmp_path / "spill" / "batch-1-7.json"
    ((found, record),) = spill.pending(url, "batch-1")
    assert found == path and record["task_id"] == 7 and Task.model_validate(record["task"]) == task
    assert spill.pending(url, "batch-2") == []
    assert (
        spill.pending(make_url(f"sqlite:///{tmp_path}/other"), "batch-1") == []
    )  # another database's


def test_error_junit_names_the_error():
    xml = error_junit("the results database /x is full", "free space")
    assert (
        'errors="1"' in xml
        and "the results database /x is full" in xml
        and "hint: free space" in xml
    )


def test_junit_directory_is_exit_2_before_anything_runs(cli, tmp_path):
    res = cli("run", "--image", "host", "--junit", str(tmp_path))
    said = " ".join(re.sub("[│╭╮╰╯─]", " ", res.stderr).split())  # the panel's frame out
    assert res.returncode == 2 and "'--junit'" in said and f"{tmp_path} is a directory" in said
    assert "Traceback" not in res.stderr
    assert not cli.db.exists()  # nothing ran, nothing stored


def test_stopping_cancels_the_executors_in_flight_and_waits_for_their_workers():
    import queue
    import threading

    from orchestrator.scheduling.flight import Flight, Item, work

    entered, released = threading.Event(), threading.Event()

    class Blocking:
        name = "fake"
        cancelled = 0

        def execute(self, task, run_id, on_result=None, on_started=None):
            entered.set()
            released.wait(10)
            return Execution(results=(), infra_error="cancelled")

        def cancel(self):
            self.cancelled += 1
            released.set()

    executor, done, flight = Blocking(), queue.Queue(), Flight()
    task = _task()
    worker = threading.Thread(
        target=work,
        args=(Item(task, "r", 1, 1.0), task, (), lambda pr: executor, None, done, flight),
    )
    worker.start()
    assert entered.wait(10)
    flight.stop()
    assert executor.cancelled == 1 and not worker.is_alive()
    assert done.get_nowait()[2].infra_error == "cancelled"
    # a worker that gets its executor after the stop runs nothing
    late = Blocking()
    work(Item(task, "r", 2, 1.0), task, (), lambda pr: late, None, done, flight)
    assert done.empty() and late.cancelled == 0
