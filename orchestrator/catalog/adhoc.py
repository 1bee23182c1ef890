"""The job a ``run`` selects from its flags: a job file, or ``--image`` with ``--suite`` and
``--check`` (an ad-hoc job), and ``--profiling-caps`` on its profiler suite. Pure: plain values
in, a checked ``JobSpec`` out, an ``InputError`` (exit 2) for a selection that cannot run."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..errors import InputError
from ..spec import JobSpec, SuiteRef
from .core import Catalog, load_job, validate_check_globs, validate_suites

DEFAULT_SUITE = "smoke"


@dataclass(frozen=True)
class Selection:
    """What to run: ``job`` (a job spec file) or ``images`` with ``suites`` and ``checks``,
    each check with ``deadline`` seconds, each suite's container ``timeout`` seconds."""

    job: Path | None = None
    images: tuple[str, ...] = ()
    suites: tuple[str, ...] = ()
    checks: tuple[str, ...] = ()
    deadline: float = 120.0
    timeout: float | None = None
    attempts: int = 1
    workload_roots: tuple[Path, ...] = ()
    profiling_caps: bool = False


def job_for(cat: Catalog, sel: Selection) -> JobSpec:
    """The job ``sel`` names: its file's (checked against ``cat``), or an ad-hoc job of its
    images and suites (``smoke`` by default); with ``profiling_caps``, its profiler suite asks
    for CAP_SYS_ADMIN."""
    spec = _selected(cat, sel)
    if not sel.profiling_caps:
        return spec
    if not any(s.name == "profiler" for s in spec.suites):
        raise InputError(
            "--profiling-caps applies to the profiler suite, and this run has none",
            "add --suite profiler (or a profiler suite to the job spec), or drop --profiling-caps",
        )
    suites = tuple(
        s.model_copy(update={"profiling_caps": True}) if s.name == "profiler" else s
        for s in spec.suites
    )
    return spec.model_copy(update={"suites": suites})


def _selected(cat: Catalog, sel: Selection) -> JobSpec:
    if sel.job and sel.images:
        raise InputError(
            "--job and --image are exclusive", "put the images in the job spec, or drop --job"
        )
    if sel.job:
        if sel.suites or sel.checks:
            raise InputError(
                "--suite/--check apply to --image runs; a job spec names its own suites"
            )
        return load_job(sel.job, cat, sel.workload_roots)
    if not sel.images:
        raise InputError(
            "nothing to run: pass --image NAME or --job FILE",
            "e.g. valorch run --image host, or valorch run --job jobs/smoke.yaml",
        )
    refs = tuple(
        SuiteRef(
            name=s,
            checks=sel.checks,
            deadline=sel.deadline,
            timeout=sel.timeout,
            attempts=sel.attempts,
        )
        for s in (sel.suites or (DEFAULT_SUITE,))
    )
    validate_suites(refs)
    validate_check_globs(refs, sel.checks)
    return JobSpec(name="adhoc", images=sel.images, suites=refs)
