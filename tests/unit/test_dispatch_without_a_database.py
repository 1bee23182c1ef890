"""The scheduler without a database: dispatch and resume record a batch through a
``Recorder`` (scheduling/recorder.py), and ``MemoryRecorder`` below is that protocol's
second implementation (the store's is services/recorder.py), keeping runs and tasks in
dicts with the store's state rules. The executors are real: the Docker executor for an
engine whose socket does not exist (a real "engine does not answer"), the host
interpreter for a host that answers (the probe's ``smoke`` env checks, about a second)."""

from __future__ import annotations

import pytest

from orchestrator import executors
from orchestrator.errors import InputError
from orchestrator.scheduling.dispatch import abandon, execute
from orchestrator.scheduling.flight import launch_planned
from orchestrator.scheduling.plan import PlannedRun, suite_checks
from orchestrator.scheduling.reporter import Reporter
from orchestrator.scheduling.resume import resume
from orchestrator.spec import BatchInfo, HostSpec, ImageSpec, JobSpec, Pending, SuiteRef, Task

SUITE = SuiteRef(name="smoke", checks=("env.*",))
CHECKS = suite_checks(SUITE)
DOWN = HostSpec(name="down", endpoint="unix:///nonexistent/valorch/docker.sock", slots=1)
UP = HostSpec(name="up", slots=1)
UP2 = HostSpec(name="up2", slots=1)
IMAGES = tuple(
    ImageSpec(alias=a, reference=f"valorch/{a}:1", backend="cpu") for a in ("base", "other")
)
JOB = JobSpec(name="job", images=tuple(i.alias for i in IMAGES), suites=(SUITE,))


class MemoryRecorder:
    """A batch's runs and tasks in memory, with the transitions the store makes."""

    def __init__(self) -> None:
        self.calls: list[str] = []
        self.runs: dict[str, dict] = {}
        self.tasks: dict[int, dict] = {}
        self.failing: BaseException | None = None  # what ``complete`` raises (a failing store)
        self.reasons: list[str] = []  # why tasks moved

    def enqueue(self, ctx, pr, executor, run_id):
        self.calls.append("enqueue")
        if run_id in self.runs:  # written already (a stop before the dispatcher noted it)
            return {t["task"].suite.name: i for i, t in self.tasks.items() if t["run"] == run_id}
        self._run(ctx, run_id, pr.image, pr.host.name, executor)
        ids = {}
        for t in pr.tasks:
            ids[t.suite.name] = len(self.tasks) + 1
            self.tasks[ids[t.suite.name]] = {
                "run": run_id, "task": t, "state": "queued", "tries": 0, "results": (), "error": None
            }  # fmt: skip
        return ids

    def start(self, task_ids):
        self.calls.append("start")
        for i in task_ids:
            self.tasks[i]["state"] = "running"
            self.tasks[i]["tries"] += 1

    def move(self, ctx, moves, reason=""):
        self.calls.append("move")
        out = []
        for task_id, task in moves:
            row = self.tasks[task_id]
            old = self.runs[row["run"]]
            new = next(
                (
                    rid
                    for rid, r in self.runs.items()
                    if (r["batch"], r["image"].alias, r["host"])
                    == (ctx.batch, task.image.alias, task.host.name)
                ),
                None,
            ) or self._run(
                ctx, f"{row['run']}@{task.host.name}", task.image, task.host.name, old["executor"]
            )
            self.reasons.append(reason)
            gone, row["run"], row["state"], row["task"] = row["run"], new, "queued", task
            if not any(t["run"] == gone for t in self.tasks.values()):
                del self.runs[gone]
            out.append(new)
        return out

    def complete(self, batch, run_id, task_id, task, execution):
        if self.failing is not None:
            raise self.failing
        self.calls.append("complete")
        row = self.tasks[task_id]
        assert row["run"] == run_id and row["state"] == "running"
        row["state"] = "error" if execution.infra_error else "done"
        row["results"] = () if execution.infra_error else execution.results
        row["error"] = execution.infra_error

    def salvage(self, batch, finished, exc):
        self.calls.append("salvage")

    def interrupt(self, run_ids):
        self.calls.append("interrupt")
        for rid in run_ids:
            if self.runs[rid]["state"] == "running":
                self.runs[rid]["state"] = "interrupted"

    def finish(self, batch):
        self.calls.append("finish")
        for rid, run in self.runs.items():
            states = {t["state"] for t in self.tasks.values() if t["run"] == rid}
            if states and states <= {"done", "error"}:
                run["state"] = (
                    "error" if states == {"error"} else "failed" if "error" in states else "done"
                )

    def reopen(self, ref, image_of, checks_of):
        self.calls.append("reopen")
        batch = next(  # a batch id, or a run id or its prefix
            (
                r["batch"]
                for rid, r in self.runs.items()
                if ref == r["batch"] or rid.startswith(ref)
            ),
            None,
        )
        if batch is None:
            return None
        todo = []
        for task_id, row in self.tasks.items():
            run = self.runs[row["run"]]
            if run["batch"] == batch and row["state"] != "done":
                task = row["task"].model_copy(
                    update={"image": image_of(run["image"]), "checks": checks_of(row["task"].suite)}
                )
                row.update(state="queued", results=(), error=None)
                run["state"] = "running"
                todo.append(Pending(task, task_id, row["run"], run["executor"]))
        return BatchInfo(batch, JOB.name, JOB.spec_hash, ()), todo

    def _run(self, ctx, run_id, image, host, executor):
        self.runs[run_id] = {
            "batch": ctx.batch, "image": image, "host": host, "executor": executor, "state": "running"
        }  # fmt: skip
        return run_id

    def on(self, host):
        return [t for t in self.tasks.values() if self.runs[t["run"]]["host"] == host]


def executor_for(pr):
    """The Docker executor where the engine is gone, the host interpreter where it answers."""
    return executors.create("docker" if pr.host.name == "down" else "host", pr.host)


def _launch(hosts, host, *images, reporter=None):
    """A new batch of ``images`` planned on ``host``, of the hosts ``hosts``."""
    planned = tuple(
        PlannedRun(i, host, (Task(image=i, suite=SUITE, host=host, checks=CHECKS),)) for i in images
    )
    return launch_planned(planned, executor_for, reporter, hosts)


def test_a_task_whose_engine_does_not_answer_runs_again_on_another_host():
    rec = MemoryRecorder()
    execute(_launch((DOWN, UP), DOWN, IMAGES[0]), JOB, rec, "b1", (DOWN, UP))
    assert rec.calls == ["enqueue", "start", "move", "start", "complete", "finish"]
    ((run_id, run),) = rec.runs.items()  # the run on "down" went with its last task
    assert run["host"] == "up" and run["state"] == "done"
    (task,) = rec.tasks.values()
    assert task["run"] == run_id and task["tries"] == 2
    (reason,) = rec.reasons
    assert "Docker engine at unix:///nonexistent/valorch/docker.sock does not answer" in reason
    assert {r.status for r in task["results"]} >= {"pass"}  # stored once, from "up"


def test_without_another_host_the_infrastructure_error_is_the_tasks_state():
    rec = MemoryRecorder()
    execute(_launch((DOWN,), DOWN, IMAGES[0]), JOB, rec, "b1", (DOWN,))
    assert rec.calls == ["enqueue", "start", "complete", "finish"]
    ((_, run),) = rec.runs.items()
    (task,) = rec.tasks.values()
    assert run["state"] == "error" and task["state"] == "error" and task["results"] == ()
    assert "does not answer" in task["error"]


class StopAfterFirst(Reporter):
    """Ctrl-C as the first task ends: the reporter's hook is where the main thread is (the
    other hooks are the protocol's no-ops)."""

    def task_finished(self, task, execution):
        raise KeyboardInterrupt


def _interrupted(rec):
    with pytest.raises(KeyboardInterrupt):
        execute(_launch((UP,), UP, *IMAGES, reporter=StopAfterFirst()), JOB, rec, "b1", (UP,))
    return rec


def test_ctrl_c_interrupts_the_batch_and_the_task_not_run_has_no_results():
    rec = _interrupted(MemoryRecorder())
    assert rec.calls == ["enqueue", "enqueue", "start", "complete", "salvage", "interrupt"]
    assert sorted(r["state"] for r in rec.runs.values()) == ["interrupted", "interrupted"]
    done, waiting = sorted(rec.tasks.values(), key=lambda t: t["state"])
    assert done["state"] == "done" and done["results"]
    assert waiting["state"] == "queued" and waiting["results"] == () and waiting["tries"] == 0


def test_a_failing_store_stops_the_batch_and_its_runs_are_interrupted():
    rec = MemoryRecorder()
    rec.failing = OSError("the database went away")
    with pytest.raises(OSError, match="went away"):
        execute(_launch((UP,), UP, IMAGES[0]), JOB, rec, "b1", (UP,))
    assert rec.calls == ["enqueue", "start", "salvage", "interrupt"]
    assert [r["state"] for r in rec.runs.values()] == ["interrupted"]
    assert [t["results"] for t in rec.tasks.values()] == [()]


def test_ctrl_c_before_the_rows_of_a_first_wave_writes_them_for_resume():
    rec = MemoryRecorder()
    launch = _launch((UP,), UP, *IMAGES)
    flying = launch.start_ready()  # the first wave starts before the rows are written
    assert len(flying) == 1 and not rec.calls
    abandon(launch, BatchInfo("b1", JOB.name, JOB.spec_hash, ()), rec, KeyboardInterrupt())
    assert rec.calls == ["salvage", "enqueue", "enqueue", "start", "interrupt"]
    assert set(rec.runs) == {it.run_id for it in launch.items}  # the ids the launch gave
    assert sorted(t["state"] for t in rec.tasks.values()) == ["queued", "running"]
    assert {r["state"] for r in rec.runs.values()} == {"interrupted"}


def test_resume_reopens_then_moves_then_runs_what_was_not_done_on_the_hosts_of_now():
    rec = _interrupted(MemoryRecorder())
    rec.calls.clear()
    waiting = next(t for t in rec.tasks.values() if t["state"] == "queued")
    run_id = waiting["run"]
    # by a run id's prefix; "up" is gone, "up2" is the host of now
    assert resume(run_id[:8], rec, None, (UP2,), executor_for) == "b1"
    assert rec.calls == ["reopen", "move", "start", "complete", "finish"]
    assert [t["state"] for t in rec.on("up")] == ["done"]  # not run again
    (moved,) = rec.on("up2")
    assert moved is waiting and moved["tries"] == 1 and moved["results"]
    assert sorted(r["state"] for r in rec.runs.values()) == ["done", "done"]


def test_resume_of_an_unknown_batch_is_bad_input():
    with pytest.raises(InputError, match="no batch or run 'nope'"):
        resume("nope", MemoryRecorder(), None, (UP,), executor_for)


class Hooks(Reporter):
    """Every hook a batch calls, in order; ``result`` only counted (they come from the
    worker thread, between started and finished)."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str]] = []
        self.results = 0

    def task_queued(self, task, expected):
        self.seen.append(("queued", task.host.name))

    def task_started(self, task):
        self.seen.append(("started", task.host.name))

    def result(self, task, result):
        self.results += 1

    def task_retried(self, task, reason):
        self.seen.append(("retried", task.host.name))

    def task_finished(self, task, execution):
        self.seen.append(("finished", task.host.name))


def test_a_reporter_hears_each_hook_in_order_and_one_it_leaves_out_is_a_no_op():
    hooks = Hooks()
    execute(_launch((DOWN, UP), DOWN, IMAGES[0], reporter=hooks), JOB, MemoryRecorder(), "b1")
    assert hooks.seen == [
        ("queued", "down"),
        ("started", "down"),
        ("retried", "up"),
        ("started", "up"),
        ("finished", "up"),
    ]
    assert hooks.results > 0

    class OnlyFinished(Reporter):
        def __init__(self) -> None:
            self.finished = 0

        def task_finished(self, task, execution):
            self.finished += 1

    only = OnlyFinished()
    execute(_launch((UP,), UP, *IMAGES, reporter=only), JOB, MemoryRecorder(), "b2")
    assert only.finished == 2


def test_the_launch_owns_its_lists():
    """Others read a launch's tasks; they change them only through its methods."""
    launch = _launch((UP,), UP, *IMAGES)
    assert isinstance(launch.items, tuple) and isinstance(launch.pending, tuple)
    for name in ("items", "pending", "runs", "running"):
        with pytest.raises(AttributeError):
            setattr(launch, name, ())
    (_planned, run_id), _ = launch.runs
    launch.rows_written(run_id, {SUITE.name: 7})
    assert [it.task_id for it in launch.items if it.run_id == run_id] == [7]
    assert run_id not in {r for _, r in launch.runs}
    flying = launch.start_ready()
    assert launch.in_flight() == flying and launch.running == 1
    launch.stop()
