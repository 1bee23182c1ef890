"""``valorch run`` as one call: the options a command builds (what to run, where, how), the
progress it shows, and the ``RunReport`` it prints, whose ``outcome`` is the exit code.

``run`` reads as the run's stages, in order: plan, stage, then for each batch (``--repeat``)
start the first wave, open the store, dispatch, finish, triage (``services/batch.run_batch``),
then report."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from ..catalog.adhoc import Selection, job_for
from ..catalog.core import Catalog
from ..errors import InputError
from ..executors import cleanup
from ..hosts.inventory import unused_fields
from ..scheduling.flight import Reporter
from . import run as service
from .batch import run_batch
from .pull import check_policy

if TYPE_CHECKING:
    from sqlalchemy.orm import Session, sessionmaker

    from ..executors.pull import PullEvent
    from ..store.queue import RunSummary
    from .preflight import Verdict


@dataclass(frozen=True)
class RunOptions:
    """A ``valorch run``: what (``selection``, or ``resume`` a stored batch), where, how many
    times, what known issues excuse, and whether a failing check is exit 1 (``gate``)."""

    selection: Selection = field(default_factory=Selection)
    where: service.Where = field(default_factory=service.Where)
    pull: str = "missing"  # --pull: how the hosts are readied (place_job's Staging)
    ca: Path | None = None  # --ca
    resume: str | None = None
    retries: int = 2
    repeat: int = 1
    known_issues: Path | None = None
    gate: bool = True
    allow_empty: bool = False  # --allow-empty: a run that tested nothing is exit 0, not 1


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
        """A known-issues entry that can never match; a suite over its time budget."""
        ...


def check(opts: RunOptions) -> None:
    """The options' own errors (exit 2), before anything is loaded or runs."""
    check_policy(opts.pull)
    sel = opts.selection
    if opts.resume and (sel.job or sel.images or sel.profiling_caps):
        raise InputError(
            "--resume takes the job from the stored batch", "drop --job/--image/--profiling-caps"
        )


def follow_typed_tags(cat: Catalog, opts: RunOptions, progress: RunProgress) -> Catalog:
    """The catalogue with each ``--image REPO:TAG`` of a catalogued image pinned to what the
    tag names now (``pull.typed_tags``); a moved tag, or a registry that cannot be asked,
    is said before anything runs."""
    from ..registry import RegistryClient
    from .pull import typed_tags

    client = RegistryClient(ca=str(opts.ca) if opts.ca else None)
    cat, tags = typed_tags(cat, opts.selection.images, client)
    for tag in tags:
        if tag.said:
            progress.warning(tag.said)
    return cat


def run(
    opts: RunOptions, cat: Catalog, factory: sessionmaker[Session], progress: RunProgress
) -> service.RunReport:
    """Resume a batch, or run the selected job where ``opts.where`` says; every result is
    stored and the report (with its ``outcome``) returned."""
    check(opts)
    from ..store.queries import now

    now()  # a clock before valorch's epoch is refused before anything runs
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
        if opts.selection.images:  # an explicit REPO:TAG runs what the tag names now
            cat = follow_typed_tags(cat, opts, progress)
        spec = job_for(cat, opts.selection)
        # preflight and pulls first (their own progress), then the live view of the tasks
        with progress.pulls() as on_pull:
            staging = service.Staging(
                opts.pull, str(opts.ca) if opts.ca else None, on_pull, progress.quarantined
            )
            planned = service.plan_job(spec, cat, factory, opts.where, staging)
            placed = service.stage_job(planned, staging)
        summaries = []
        from .budgets import over_budget

        for warning in over_budget(placed.planned, placed.history or {}):
            progress.warning(warning)  # before anything runs
        if placed.hosts is not None:  # a hosts file this run reads (no cluster placed it)
            used = {pr.image.executor for pr in placed.planned}
            for warning in unused_fields(opts.where.hosts_file, used):
                progress.warning(warning)
        with progress.tasks() as reporter:
            for _ in range(opts.repeat):  # one batch after the other, never side by side
                summaries += run_batch(placed, spec, factory, reporter, opts.retries)
    rep = service.report(factory, summaries, issues, opts.gate, resumed, opts.allow_empty)
    # the ended containers were being removed while their results were stored and reported
    cleanup.settle()
    return rep
