"""What the scheduler tells whoever shows a batch's progress: a typed protocol whose every
hook has a no-op default.

A reporter subclasses ``Reporter`` and overrides the hooks it shows; the others do
nothing. A new hook is one method here, with its no-op body, and one call where the
scheduler learns of the event: no reporter has to change, and mypy checks every override's
signature (no method looked up by name).

The hooks, in the order they happen to a task:

- ``task_queued(task, expected)``: waiting for a slot; ``expected``: its expected seconds
  (the plan's history, else the suite's estimate);
- ``task_started(task)``: its executor was given it (its GPUs are in ``task.gpus``);
- ``result(task, result)``: one check's result, as the executor reads it (a worker thread);
- ``task_retried(task, reason)``: an infrastructure error moved it to ``task.host``;
- ``task_finished(task, execution)``: its execution is recorded.
"""

from __future__ import annotations

from typing import Protocol

from ..spec import CheckResult, Execution, Task


class Reporter(Protocol):
    """The hooks of a batch's tasks (the module's docstring lists them in order)."""

    def task_queued(self, task: Task, expected: float) -> None:
        return None

    def task_started(self, task: Task) -> None:
        return None

    def result(self, task: Task, result: CheckResult) -> None:
        return None

    def task_retried(self, task: Task, reason: str) -> None:
        return None

    def task_finished(self, task: Task, execution: Execution) -> None:
        return None


class Silent(Reporter):
    """A batch nobody watches: every hook a no-op."""


SILENT: Reporter = Silent()
