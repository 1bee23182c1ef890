"""The live view of a run: tasks per host (queued, running, done, failed) and an ETA."""

from __future__ import annotations

import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from types import TracebackType
from typing import TYPE_CHECKING

from rich.console import Console
from rich.live import Live
from rich.markup import escape

from ..scheduling.plan import task_key
from ..scheduling.reporter import Reporter
from ..spec import FAILING, CheckResult, Execution, Task
from ..words import count
from .common import fit
from .tables import Table

if TYPE_CHECKING:
    from rich.progress import TaskID

    from ..executors.pull import PullEvent
    from ..services.preflight import Verdict


def _nodes(task: Task) -> tuple[str, ...]:
    """The hosts a task runs on, in node-rank order: every node of a multi-node task."""
    return tuple(h.name for h in task.nodes) or (task.host.name,)


#: a task's states, in the order the live table counts them per host
_STATES = ("queued", "running", "done", "failed")


@dataclass
class _Row:
    host: str
    slots: int
    expected: float
    state: str = "queued"
    started: float = 0.0
    checks: int = 0  # the task's checks (m of "check n of m")
    reported: set[str] = field(default_factory=set)  # checks with a result so far
    nodes: tuple[str, ...] = ()  # every node's host, in rank order (empty: ``host`` only)

    @property
    def hosts(self) -> tuple[str, ...]:
        """The distinct hosts this task occupies (each node's, rank 0's first)."""
        return tuple(dict.fromkeys(self.nodes or (self.host,)))

    def now(self, key: str) -> str:
        """What a running task is at: "image/suite · check n of m"."""
        n = min(len(self.reported) + 1, self.checks) if self.checks else 0
        return f"{key} · check {n} of {self.checks}" if self.checks else key


class LiveReporter(Reporter):
    """A rich Live table on stderr; also a context manager. Thread-safe (tasks report from
    threads). Its hooks are the scheduler's (``scheduling/reporter.Reporter``)."""

    def __init__(self, console: Console, disable: bool = False) -> None:
        self.console = console
        self.disable = disable
        self.rows: dict[str, _Row] = {}
        self.lock = threading.Lock()
        self.t0 = time.monotonic()
        # A live table redraws in place on a terminal; in a CI log (stderr not a terminal) it
        # would leave its last frame without a line end, so there each task's end is a line
        # of its own and the final table is printed once, as a block.
        self.interactive = console.is_terminal
        self.live = (
            Live(self.table(), console=console, refresh_per_second=2)
            if not disable and self.interactive
            else None
        )

    def __enter__(self) -> LiveReporter:
        if self.live:
            self.live.__enter__()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self.live:
            self.live.update(self.table())
            self.live.__exit__(kind, exc, tb)
        elif not self.disable and self.rows:
            self.console.print(self.table())
            self.console.print()

    def _refresh(self) -> None:
        if self.live:
            self.live.update(self.table())

    def _say(self, text: str) -> None:
        if not self.disable:
            self.console.print(text)

    def eta(self) -> float:
        """Seconds left: per host, the expected work left over its slots (the slowest host)."""
        now = time.monotonic()
        left: dict[str, float] = {}
        for r in self.rows.values():
            if r.state == "queued":
                rest = r.expected
            elif r.state == "running":
                rest = max(0.0, r.expected - (now - r.started))
            else:
                continue
            for host in r.hosts:
                left[host] = left.get(host, 0.0) + rest / max(1, r.slots)
        return max(left.values(), default=0.0)

    def table(self) -> Table:
        per = Counter((host, r.state) for r in self.rows.values() for host in r.hosts)
        elapsed = time.monotonic() - self.t0
        title = f"valorch · {elapsed:.0f}s elapsed · ETA {self.eta():.0f}s"
        table = Table("host", *_STATES, "running now", title=title, title_justify="left")
        now: dict[str, list[str]] = {}
        for key, r in self.rows.items():
            if r.state == "running":
                ranks = r.nodes or (r.host,)
                for rank, host in enumerate(ranks):
                    node = f" · node {rank} of {len(ranks)}" if len(ranks) > 1 else ""
                    now.setdefault(host, []).append(r.now(key) + node)
        for host in sorted({host for host, _ in per}):
            counts = (str(per[host, state]) for state in _STATES)
            table.add_row(host, *counts, "\n".join(now.get(host, ())) or "-")
        return table

    # the scheduler's hooks (scheduling/reporter.Reporter)
    def task_queued(self, task: Task, expected: float) -> None:
        with self.lock:
            slots = (
                max(task.host.slots, len(task.host.gpus))
                if task.image.backend != "cpu"
                else task.host.slots
            )
            self.rows[task_key(task)] = _Row(
                task.host.name, slots, expected, checks=len(task.checks), nodes=_nodes(task)
            )
            self._refresh()

    def task_retried(self, task: Task, reason: str) -> None:
        with self.lock:
            row = self.rows.get(task_key(task))
            if row:
                row.host, row.state, row.nodes = task.host.name, "queued", _nodes(task)
            self._say(
                f"  [yellow]retry[/yellow] {task_key(task)} on {task.host.name}: "
                f"{escape(fit(reason, 200, self.console))}"
            )
            self._refresh()

    def task_started(self, task: Task) -> None:
        with self.lock:
            key = task_key(task)
            row = self.rows.setdefault(key, _Row(task.host.name, task.host.slots, 60.0))
            row.state, row.started, row.host = "running", time.monotonic(), task.host.name
            row.nodes = _nodes(task)
            row.checks = row.checks or len(task.checks)
            if not self.interactive:  # a CI log: what starts, where, and how long it should take
                self._say(
                    f"  start    {key} on {task.host.name} ({count(row.checks, 'check')}, "
                    f"expected {row.expected:.0f}s)"
                )
            self._refresh()

    def result(self, task: Task, result: CheckResult) -> None:
        with self.lock:
            row = self.rows.get(task_key(task))
            if row is not None:
                row.reported.add(result.check)
                self._refresh()
            if result.status in (*FAILING, "error"):
                self._say(
                    f"  [red]{result.status:8}[/red] {task.image.alias} {result.check}: "
                    f"{escape(fit(result.message, 160, self.console))}"
                )

    def task_finished(self, task: Task, execution: Execution) -> None:
        with self.lock:
            row = self.rows.get(task_key(task))
            failed = execution.infra_error or any(r.status in FAILING for r in execution.results)
            if row:
                row.state = "failed" if failed else "done"
            if execution.infra_error:
                self._say(
                    f"  [yellow]infrastructure[/yellow] {task_key(task)} on {task.host.name}: "
                    f"{escape(fit(execution.infra_error, 300, self.console))}"
                )
            elif not self.interactive:
                done = sum(r.state in ("done", "failed") for r in self.rows.values())
                self._say(
                    f"  {'failed' if failed else 'done':8} {task_key(task)} on {task.host.name} "
                    f"({done}/{len(self.rows)} tasks, {time.monotonic() - self.t0:.0f}s)"
                )
            self._refresh()


class PullProgress:
    """Per-layer pull progress with sizes, and a total per image and host (rich Progress on
    stderr). Called from several threads: one per host being staged."""

    DONE = ("Download complete", "Pull complete", "Already exists")

    def __init__(self, console: Console, disable: bool = False) -> None:
        from rich import progress as bars

        self.disable = disable
        self.progress = bars.Progress(
            bars.TextColumn("{task.description}"),
            bars.BarColumn(),
            bars.DownloadColumn(),
            bars.TransferSpeedColumn(),
            console=console,
            disable=disable,
        )
        self.console = console
        self.lock = threading.Lock()
        self.said: dict[str, str] = {}  # each pull's last word (the engine's "Status: …")
        self.layers: dict[tuple[str, str], TaskID] = {}
        self.sizes: dict[str, dict[str, list[int]]] = {}
        self.totals: dict[str, TaskID] = {}

    def __enter__(self) -> PullProgress:
        self.progress.__enter__()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.progress.__exit__(kind, exc, tb)
        if not self.disable and kind is None:  # a pull that moved no byte says so too
            for key, status in sorted(self.said.items()):
                self.console.print(f"  pulled {escape(key)}: {escape(status)}", highlight=False)

    def __call__(self, key: str, event: PullEvent) -> None:
        with self.lock:
            self.said.setdefault(key, "done")
            if event.status.startswith("Status: "):
                self.said[key] = event.status.removeprefix("Status: ")[:200]
        if event.layer is None or event.status.startswith(("Pulling from", "Digest", "Status")):
            return
        with self.lock:
            if key not in self.totals:
                self.totals[key] = self.progress.add_task(f"[bold]{key}[/bold] total", total=None)
                self.sizes[key] = {}
            size = self.sizes[key].setdefault(event.layer, [0, 0])
            if event.status == "Downloading" and event.total:
                size[:] = [event.current or 0, event.total]
            elif event.status in self.DONE:
                size[0] = size[1]
            else:
                return
            lid = self.layers.get((key, event.layer))
            if lid is None and size[1]:
                lid = self.layers[(key, event.layer)] = self.progress.add_task(
                    f"  {event.layer}", total=size[1]
                )
            if lid is not None:
                self.progress.update(lid, completed=size[0], total=size[1])
            known = [s for s in self.sizes[key].values() if s[1]]
            self.progress.update(
                self.totals[key],
                completed=sum(s[0] for s in known),
                total=sum(s[1] for s in known) or None,
            )


class RunViews:
    """``services.pipeline.RunProgress`` on stderr: pulls, then the tasks live (neither with
    ``quiet``: --json), quarantined hosts and warnings."""

    def __init__(self, console: Console, quiet: bool = False) -> None:
        self.console = console
        self.quiet = quiet

    def pulls(self) -> PullProgress:
        return PullProgress(self.console, disable=self.quiet)

    def tasks(self) -> LiveReporter:
        return LiveReporter(self.console, disable=self.quiet)

    def quarantined(self, verdict: Verdict) -> None:
        self.console.print(
            f"[yellow]quarantined[/yellow] {verdict.host} for this batch: {verdict.reason}"
        )

    def warning(self, text: str) -> None:
        self.console.print(f"warning: {text}", markup=False)
