"""A stop (Ctrl-C, SIGTERM) that lands while the dispatcher writes a new batch's rows, after
a run's transaction committed and before the dispatcher noted it: ``dispatch.abandon``
writes the rows again, and the run written already is taken as it is, so every run of the
batch is stored and ``interrupted`` for ``--resume``. Written again, the store's run would
be a second row under the same id: the batch was left with one run, not interrupted."""

from __future__ import annotations

import pytest

from orchestrator.scheduling.dispatch import execute
from orchestrator.scheduling.flight import launch_planned
from orchestrator.scheduling.plan import PlannedRun, suite_checks
from orchestrator.services.recorder import StoreRecorder
from orchestrator.spec import HostSpec, ImageSpec, JobSpec, SuiteRef, Task
from orchestrator.store.db import open_engine, session_factory
from orchestrator.store.models import Run

SUITE = SuiteRef(name="smoke", checks=("env.*",))
HOST = HostSpec(name="up", slots=1)
IMAGES = tuple(
    ImageSpec(alias=a, reference=f"valorch/{a}:1", backend="cpu") for a in ("base", "other")
)
JOB = JobSpec(name="job", images=tuple(i.alias for i in IMAGES), suites=(SUITE,))


class StoppedAfterFirstRun(StoreRecorder):
    """The store's recorder, with Ctrl-C landing once the first run's rows are committed."""

    def __init__(self, sessions) -> None:
        super().__init__(sessions)
        self.enqueued = 0

    def enqueue(self, ctx, pr, executor, run_id):
        ids = super().enqueue(ctx, pr, executor, run_id)
        self.enqueued += 1
        if self.enqueued == 1:
            raise KeyboardInterrupt
        return ids


def test_a_stop_after_a_run_is_written_leaves_every_run_interrupted(tmp_path):
    from orchestrator import executors

    factory = session_factory(open_engine(str(tmp_path / "store.sqlite")))
    planned = tuple(
        PlannedRun(i, HOST, (Task(image=i, suite=SUITE, host=HOST, checks=suite_checks(SUITE)),))
        for i in IMAGES
    )
    launch = launch_planned(planned, lambda pr: executors.create("host", pr.host), None, (HOST,))
    rec = StoppedAfterFirstRun(factory)
    with pytest.raises(KeyboardInterrupt):
        execute(launch, JOB, rec, "b1", (HOST,))
    assert rec.enqueued == 3  # the first run, then both again in abandon
    with factory() as s:
        runs = s.query(Run).all()
        assert sorted(r.id for r in runs) == sorted(it.run_id for it in launch.items)
        assert {r.state for r in runs} == {"interrupted"}
        assert [[t.state for t in r.tasks] for r in runs] == [["queued"], ["queued"]]
