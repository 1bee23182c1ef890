"""What dispatch and resume record of a batch, as a protocol: the scheduler decides, a
recorder keeps. ``services/recorder.py`` implements it over the store (each call one
transaction: it owns the sessions); the scheduling layer never sees a session, so that it
runs, and is tested, with any implementation (tests/unit/test_dispatch_without_a_database.py
keeps one in memory).

The transaction rules are the recorder's promise:

- ``complete``: a task's results and its final state in one transaction, so that an
  interrupted task has no results and ``--resume`` re-runs it whole.
- ``move``: every move given is one transaction (resume re-places a batch's tasks at once).
- ``interrupt``: best effort once a batch has stopped; a store that cannot take it leaves
  the runs ``running``, and ``--resume`` re-queues every task not done all the same.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from ..spec import BatchInfo, CheckInfo, Execution, ImageSpec, Pending, SuiteRef, Task
from .flight import Item
from .plan import PlannedRun

#: the image a stored run names (as stored) -> the image to run it with now
ImageOf = Callable[[ImageSpec], ImageSpec]
#: a suite -> its checks as this valorch knows them
ChecksOf = Callable[[SuiteRef], tuple[CheckInfo, ...]]


class Recorder(Protocol):
    def enqueue(self, ctx: BatchInfo, pr: PlannedRun, executor: str, run_id: str) -> dict[str, int]:
        """A new run of ``pr`` with the id ``run_id`` and one queued task per suite: the
        task ids by suite name. A run already written under ``run_id`` is left as it is and
        its task ids returned (a stop between its write and the caller's note of it has
        ``dispatch.abandon`` write the batch's rows again)."""
        ...

    def start(self, task_ids: Sequence[int]) -> None:
        """These tasks are running (one more try each)."""
        ...

    def move(
        self, ctx: BatchInfo, moves: Sequence[tuple[int, Task]], reason: str = ""
    ) -> list[str]:
        """Re-queue each (task id, task) on ``task.host`` (the batch's run there, made when
        missing), all in one transaction: the tasks' new run ids, in order."""
        ...

    def complete(
        self, batch: str, run_id: str, task_id: int, task: Task, execution: Execution
    ) -> None:
        """A task's results and its final state (``done``, or ``error`` for an
        infrastructure failure, whose results are not kept), in one transaction. A store
        that cannot take them keeps them for ``--resume`` where it can, and raises."""
        ...

    def salvage(
        self, batch: str, finished: Sequence[tuple[Item, Execution]], exc: BaseException
    ) -> None:
        """Executions that came back while the batch stopped because of ``exc``: kept for
        ``--resume`` where the store is what failed (its disk is full), else dropped."""
        ...

    def interrupt(self, run_ids: set[str]) -> None:
        """These runs stopped before their tasks did (Ctrl-C, SIGTERM, a failing store)."""
        ...

    def finish(self, batch: str) -> None:
        """Every run of the batch whose tasks all ended gets its final state."""
        ...

    def reopen(
        self, ref: str, image_of: ImageOf, checks_of: ChecksOf
    ) -> tuple[BatchInfo, list[Pending]] | None:
        """The batch of ``ref`` (a batch id, or a run id or prefix of it) with every task that
        did not end with a verdict queued again (its results, if any, dropped): the batch
        and those tasks. None when no batch or run is ``ref``."""
        ...
