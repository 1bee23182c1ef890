"""A probe that dies under one check (pure parts): the check it was running is `crash`, the
checks after it are `error` "not run: …, after check X" marked for one more run in a fresh
container; an OOM names the /tmp tmpfs; the tmpfs is a share of the memory limit."""

from orchestrator.executors.container import TMPFS, Limits, tmpfs_for
from orchestrator.executors.docker import oom_cause
from orchestrator.executors.transcript import NOT_RUN, not_run, probe_killed, rerun_task, with_rerun
from orchestrator.spec import CheckInfo, CheckResult, Execution, HostSpec, ImageSpec, SuiteRef, Task

CHECKS = tuple(
    CheckInfo(id=f"command.{c}", feature=c, kind="feature") for c in ("a", "hog", "b", "c")
)


def test_the_running_check_crashes_and_the_rest_are_not_run():
    done = [CheckResult(check="command.a", status="pass")]
    out = {r.check: r for r in probe_killed(done, CHECKS, "command.hog", "SIGKILL (exit code 137)")}
    assert out["command.a"].status == "pass"
    assert (
        out["command.hog"].status == "crash" and "killed by SIGKILL" in out["command.hog"].message
    )
    for c in ("command.b", "command.c"):
        assert out[c].status == "error" and out[c].metrics == {"not_run": True}
        assert out[c].message == f"{NOT_RUN}SIGKILL (exit code 137), after check command.hog"


def test_not_run_checks_run_again_and_replace_their_first_results():
    task = Task(
        image=ImageSpec(alias="i", reference="r", backend="cpu"),
        suite=SuiteRef(name="command"),
        host=HostSpec(name="h"),
        checks=CHECKS,
    )
    first = Execution(
        results=tuple(probe_killed([], CHECKS, "command.a", "SIGKILL")), exit_code=137
    )
    again = not_run(first)
    assert again == ["command.hog", "command.b", "command.c"]
    second_task = rerun_task(task, again)
    assert [c.id for c in second_task.checks] == again and second_task.suite.checks == tuple(
        sorted(again)
    )
    second = Execution(
        results=tuple(CheckResult(check=c, status="pass") for c in again), exit_code=0
    )
    merged = with_rerun(first, second)
    assert {r.check: r.status for r in merged.results} == {
        "command.a": "crash",
        "command.hog": "pass",
        "command.b": "pass",
        "command.c": "pass",
    }
    assert merged.meta["rerun"]["checks"] == sorted(again)


def test_tmpfs_is_well_under_the_memory_limit():
    assert tmpfs_for(Limits()) == TMPFS
    small = tmpfs_for(Limits(memory=512 << 20))
    assert small["/tmp"].endswith(f"size={128 << 20}") and small["/var/tmp"].endswith(
        f"size={32 << 20}"
    )
    assert tmpfs_for(Limits(memory=64 << 30))["/tmp"].endswith(
        f"size={1 << 30}"
    )  # never above the default


def test_an_oom_names_the_tmpfs():
    says = oom_cause(Limits(memory=512 << 20))
    assert (
        "out-of-memory killer" in says
        and "512 MiB" in says
        and "/tmp" in says
        and "128 MiB" in says
    )
