"""The scheduler's recorder over the store (``scheduling/recorder.Recorder``): it owns the
sessions, each call one transaction over ``store/queue.py``'s named transitions. Imported
where a batch's rows are written, not before: a batch's first wave starts before its rows
are written (``services/batch``)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, TypeVar

from sqlalchemy.engine import URL
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from ..executors import owner
from ..scheduling.flight import Item
from ..scheduling.plan import PlannedRun, task_key
from ..scheduling.recorder import ChecksOf, ImageOf
from ..spec import Backend, BatchInfo, Execution, ImageSpec, Pending, Task
from ..store import queue as tq
from ..store import spill
from ..store.full import StorageFull
from ..store.models import Run
from ..store.queue import RunSummary
from .session import engine_of

if TYPE_CHECKING:
    from .session import Deferred

T = TypeVar("T")


#: times a task's results are stored again when another process added the same new check first
STORE_TRIES = 3


class StoreRecorder:
    """A batch's rows in the results database. ``sessions``: a session factory (a
    ``sessionmaker`` or ``services.session.Deferred``), opened at the first call."""

    def __init__(self, sessions: sessionmaker[Session] | Deferred) -> None:
        self.sessions = sessions

    def _commit(self, change: Callable[[Session], T]) -> T:
        with self.sessions() as session:
            done = change(session)
            session.commit()
        return done

    def enqueue(self, ctx: BatchInfo, pr: PlannedRun, executor: str, run_id: str) -> dict[str, int]:
        _, ids = self._commit(
            lambda session: tq.enqueue(
                session,
                ctx,
                pr.image,
                pr.host,
                executor,
                any(t.cpu_only for t in pr.tasks),
                [t.suite for t in pr.tasks],
                run_id=run_id,
                owner=owner.me(),  # this process: a run whose owner died is abandoned
            )
        )
        return ids

    def start(self, task_ids: Sequence[int]) -> None:
        with self.sessions() as session:
            for task_id in task_ids:
                tq.start(session, task_id)
            session.commit()

    def move(
        self, ctx: BatchInfo, moves: Sequence[tuple[int, Task]], reason: str = ""
    ) -> list[str]:
        return self._commit(
            lambda session: [tq.move(session, ctx, i, task, reason) for i, task in moves]
        )

    def complete(
        self, batch: str, run_id: str, task_id: int, task: Task, execution: Execution
    ) -> None:
        """One transaction. Another process may add the same new check row first (unique
        check id/version): then the transaction is retried and finds it. A full disk spills
        the results (``store.spill``) and stops the batch."""
        for attempt in range(STORE_TRIES):
            try:
                self._commit(lambda session: tq.complete(session, run_id, task_id, task, execution))
                return
            except IntegrityError:
                if attempt == STORE_TRIES - 1:
                    raise
            except StorageFull as exc:
                self._spill(batch, run_id, task_id, task, execution, exc)
                raise

    def salvage(
        self, batch: str, finished: Sequence[tuple[Item, Execution]], exc: BaseException
    ) -> None:
        if isinstance(exc, StorageFull):  # what was measured meanwhile waits for --resume too
            for it, execution in finished:
                if it.task_id is not None:
                    self._spill(batch, it.run_id, it.task_id, it.task, execution, exc)

    def interrupt(self, run_ids: set[str]) -> None:
        # a full disk: the runs stay "running"; --resume re-queues every task not done
        with contextlib.suppress(StorageFull):
            self._commit(lambda session: tq.interrupt(session, run_ids))

    def finish(self, batch: str) -> None:
        self._commit(lambda session: tq.finish(session, batch))

    def reopen(
        self, ref: str, image_of: ImageOf, checks_of: ChecksOf
    ) -> tuple[BatchInfo, list[Pending]] | None:
        """Spilled results (a full disk kept them out) are stored first, each with its task's
        state, and their files deleted once committed; then the batch's unfinished tasks are
        queued again."""
        with self.sessions() as session:
            runs = tq.batch_of(session, ref)
            if not runs:
                return None
            ctx = tq.batch_info(runs[0])
            spilled = spill.recover(session, self._url(), ctx.batch, tq.complete)
            session.commit()
            for path in spilled:
                path.unlink(missing_ok=True)
            session.expire_all()
            runs = tq.batch_of(session, ctx.batch)
            todo = tq.reopen(
                session, runs, lambda run: image_of(stored_image(run)), checks_of, owner.me()
            )
            session.commit()
        return ctx, todo

    def refuse_foreign(self, ref: str) -> None:
        """Exit 2 when a run of the batch came from another store (store/queue.py)."""
        with self.sessions() as session:
            tq.refuse_foreign(tq.batch_of(session, ref))

    def batch_id(self, ref: str) -> str | None:
        """The batch of ``ref`` (a batch id, or a run id or prefix of it); None when unknown."""
        with self.sessions() as session:
            runs = tq.batch_of(session, ref)
            return runs[0].batch if runs else None

    def summaries(self, batch: str) -> list[RunSummary]:
        with self.sessions() as session:
            return tq.summaries(session, batch)

    def _url(self) -> URL:
        return engine_of(self.sessions).url

    def _spill(
        self,
        batch: str,
        run_id: str,
        task_id: int,
        task: Task,
        execution: Execution,
        exc: StorageFull,
    ) -> None:
        try:
            path = spill.write(self._url(), batch, run_id, task_id, task, execution)
        except OSError as err:
            exc.message += (
                f"; the results of {task_key(task)} could not be spilled either ({err.strerror})"
            )
            return
        exc.spill = path.parent
        if "spilled to" not in exc.message:
            exc.message += (
                f"; the results measured so far are spilled to {path.parent} for --resume"
            )


def stored_image(run: Run) -> ImageSpec:
    """The image as a run stored it (``host`` for a run on the host interpreter)."""
    row = run.image
    return ImageSpec(
        alias=row.alias,
        reference=row.reference,
        backend=Backend(row.backend),
        family=row.family or "cpu",
        components=dict(row.components or {}),
        executor="host" if run.executor == "host" else "docker",
    )
