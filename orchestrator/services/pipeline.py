"""One pipeline for ``valorch run``, ``qualify`` and ``bisect``: the options a command builds
(``RunOptions``: what runs, and ``Where`` and how), the progress it shows (``RunProgress``),
and ``execute``, whose body is the run's stages in order, one call each, as nox's
``workflow.execute`` runs its list of tasks:

    select → plan → stage → warn → each batch (``--repeat``): first wave, store, dispatch,
    finish, triage (``services/batch.run_batch``) → the store checked → report

``run`` reports with ``services/run.report``; ``qualify`` diffs the stored runs against its
baseline, and ``bisect`` reads one check's verdict back."""

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
from ..spec import JobSpec
from . import run as stages
from .batch import run_batch
from .placing import Placement, Where
from .pull import check_policy

if TYPE_CHECKING:
    from sqlalchemy.orm import Session, sessionmaker

    from ..executors.pull import PullEvent
    from ..store.queue import RunSummary
    from .preflight import Verdict


@dataclass(frozen=True)
class RunOptions:
    """What runs (``selection``, a ``job`` the caller built, or ``resume`` a stored batch)."""

    selection: Selection = field(default_factory=Selection)
    job: JobSpec | None = None  # qualify's candidate job, bisect's one-check probe
    where: Where = field(default_factory=Where)
    resume: str | None = None
    known_issues: Path | None = None
    gate: bool = True
    allow_empty: bool = False  # --allow-empty: a run that tested nothing is exit 0, not 1


class RunProgress(Protocol):
    """What a run shows while it works (the commands' terminal views)."""

    def pulls(self) -> AbstractContextManager[Callable[[str, PullEvent], None]]:
        """Around planning and staging: the callback that is given each pull event."""

    def tasks(self) -> AbstractContextManager[Reporter]:
        """Around the batches: the reporter of their tasks and results."""

    def quarantined(self, verdict: Verdict) -> None:
        """A host failed its preflight and is out of this batch."""

    def warning(self, text: str) -> None:
        """A known-issues entry that can never match; a suite over its time budget."""


def check(opts: RunOptions) -> None:
    """The options' own errors (exit 2), before anything is loaded or runs."""
    check_policy(opts.where.pull)
    sel = opts.selection
    if opts.resume and (sel.job or sel.images or sel.profiling_caps):
        raise InputError(
            "--resume takes the job from the stored batch", "drop --job/--image/--profiling-caps"
        )


def execute(
    opts: RunOptions, cat: Catalog, factory: sessionmaker[Session], progress: RunProgress
) -> tuple[str | None, list[RunSummary]]:
    """The pipeline: every stage of a run, in order; every result is stored. Returns the
    batch ``--resume`` finished (None without it) and the summary of each stored run."""
    check(opts)
    from ..store.queries import now

    now()  # a clock before valorch's epoch is refused before anything runs
    resumed = opts.resume
    if resumed:  # the stored batch is the plan
        with progress.tasks() as reporter:
            resumed, summaries = stages.resume(resumed, cat, factory, opts.where, reporter)
    else:
        spec, cat = select(opts, cat, progress)
        with progress.pulls() as on_pull:  # preflight and pulls show before the tasks
            placed = stages.plan_job(spec, cat, factory, opts.where, progress.quarantined)
            placed = stages.stage_job(placed, opts.where, on_pull)
        warn(placed, opts.where, progress)
        # ``--repeat`` batches one after the other, never side by side (``Where.repeat``)
        with progress.tasks() as reporter:
            where = opts.where
            summaries = [
                s
                for _ in range(where.repeat)
                for s in run_batch(placed, spec, factory, reporter, where.retries)
            ]
    from .session import check_same_store

    check_same_store(factory)  # a store deleted or replaced mid-run: exit 3, no "3 pass"
    return resumed, summaries


def run(
    opts: RunOptions, cat: Catalog, factory: sessionmaker[Session], progress: RunProgress
) -> stages.RunReport:
    """``valorch run``: the pipeline, then its report (with its ``outcome``)."""
    check(opts)
    issues = stages.load_known_issues(opts.known_issues, progress.warning)
    resumed, summaries = execute(opts, cat, factory, progress)
    rep = stages.report(factory, summaries, issues, opts.gate, resumed, opts.allow_empty)
    # the ended containers were being removed while their results were stored and reported
    cleanup.settle()
    return rep


def select(opts: RunOptions, cat: Catalog, progress: RunProgress) -> tuple[JobSpec, Catalog]:
    """The job: the caller's, else the selection's (``--job``, ``--image``, ``--suite``), and
    the catalogue it runs from: an ``--image REPO:TAG`` of a catalogued image is pinned to
    what the tag names now (``pull.typed_tags``); a moved tag, or a registry that cannot be
    asked, is said first."""
    if opts.job is not None:
        return opts.job, cat
    if opts.selection.images:
        from ..registry import RegistryClient
        from .pull import typed_tags

        client = RegistryClient(ca=str(opts.where.ca) if opts.where.ca else None)
        cat, said = typed_tags(cat, opts.selection.images, client)
        for warning in said:
            progress.warning(warning)
    return job_for(cat, opts.selection), cat


def warn(placed: Placement, where: Where, progress: RunProgress) -> None:
    """Before anything runs: each suite over its time budget, and each field of a hosts file
    this run reads that does nothing here."""
    from .budgets import over_budget

    for warning in over_budget(placed.planned, placed.history or {}):
        progress.warning(warning)
    if placed.hosts is not None:  # a hosts file this run reads (no cluster placed it)
        used = {pr.image.executor for pr in placed.planned}
        for warning in unused_fields(where.hosts_file, used):
            progress.warning(warning)
