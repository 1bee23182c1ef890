"""``valorch run`` as one call: the options a command builds (what to run, where, how), the
progress it shows, and the ``RunReport`` it prints, whose ``outcome`` is the exit code."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from ..catalog.adhoc import Selection, job_for
from ..catalog.core import Catalog
from ..errors import InputError
from ..scheduling.flight import Reporter
from . import run as service
from .pull import check_policy

if TYPE_CHECKING:
    from sqlalchemy.orm import Session, sessionmaker

    from ..executors.pull import PullEvent
    from ..store.queue import RunSummary
    from .preflight import Verdict


@dataclass(frozen=True)
class Where:
    """Where the tasks run and how their hosts are readied, as the flags give it (--executor,
    --hosts, --pull …); ``place_job`` takes it as its two option objects."""

    cpu_only: bool = False
    executor: str = "docker"
    partition: str | None = None
    hosts_file: Path | None = None
    slurm_spool: Path | None = None
    namespace: str = "default"
    pull: str = "missing"
    ca: Path | None = None

    def placement(self) -> service.Where:
        """Where ``place_job`` puts the tasks."""
        return service.Where(
            self.executor,
            self.cpu_only,
            self.hosts_file,
            self.partition,
            self.slurm_spool,
            self.namespace,
        )

    def staging(
        self,
        on_pull: Callable[[str, PullEvent], None] | None = None,
        on_quarantine: Callable[[Verdict], None] | None = None,
    ) -> service.Staging:
        """How ``place_job`` readies the hosts (pull policy, CA) and whom it tells."""
        return service.Staging(self.pull, str(self.ca) if self.ca else None, on_pull, on_quarantine)


@dataclass(frozen=True)
class RunOptions:
    """A ``valorch run``: what (``selection``, or ``resume`` a stored batch), where, how many
    times, what known issues excuse, and whether a failing check is exit 1 (``gate``)."""

    selection: Selection = field(default_factory=Selection)
    where: Where = field(default_factory=Where)
    resume: str | None = None
    retries: int = 2
    repeat: int = 1
    known_issues: Path | None = None
    gate: bool = True


class RunProgress(Protocol):
    """What a run shows while it works (the command's terminal views)."""

    def pulls(self) -> AbstractContextManager[Callable[[str, PullEvent], None]]:
        """Around staging: the callback that is given each pull event."""
        ...

    def tasks(self) -> AbstractContextManager[Reporter]:
        """Around the batch: the reporter of its tasks and results."""
        ...

    def quarantined(self, verdict: Verdict) -> None:
        """A host failed its preflight and is out of this batch."""
        ...

    def warning(self, text: str) -> None:
        """A known-issues entry that can never match."""
        ...


def check(opts: RunOptions) -> None:
    """The options' own errors (exit 2), before anything is loaded or runs."""
    check_policy(opts.where.pull)
    sel = opts.selection
    if opts.resume and (sel.job or sel.images or sel.profiling_caps):
        raise InputError(
            "--resume takes the job from the stored batch", "drop --job/--image/--profiling-caps"
        )


def run(
    opts: RunOptions, cat: Catalog, factory: sessionmaker[Session], progress: RunProgress
) -> service.RunReport:
    """Resume a batch, or run the selected job where ``opts.where`` says; every result is
    stored and the report (with its ``outcome``) returned."""
    check(opts)
    issues = service.load_known_issues(opts.known_issues, progress.warning)
    resumed: str | None = None
    summaries: list[RunSummary]
    if opts.resume:
        with progress.tasks() as reporter:
            resumed, summaries = service.resume(
                opts.resume,
                cat,
                factory,
                hosts_file=opts.where.hosts_file,
                retries=opts.retries,
                reporter=reporter,
            )
    else:
        spec = job_for(cat, opts.selection)
        where = opts.where
        # preflight and pulls first (their own progress), then the live view of the tasks
        with progress.pulls() as on_pull:
            placed = service.place_job(
                spec, cat, factory, where.placement(), where.staging(on_pull, progress.quarantined)
            )
        with progress.tasks() as reporter:
            summaries = service.execute_placed(
                placed, spec, factory, reporter=reporter, retries=opts.retries, repeat=opts.repeat
            )
    return service.report(factory, summaries, issues, opts.gate, resumed)
