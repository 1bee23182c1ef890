"""valorch run: validate images now (a job spec, or --image with --suite). Where and how is
``placing.OPTIONS``; the other options are constants here, so the command is parse, call, print."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from ..applies import CPU_ONLY, JOB, JSON, RESUME, Applies
from ..errors import InfrastructureError
from . import flags
from .common import (
    CatalogOption,
    DbOption,
    JsonOption,
    deferred_sessions,
    end_with,
    err,
    load_catalog,
    print_json,
    write_output,
)
from .placing import where_options

if TYPE_CHECKING:
    from ..services.placing import Where

_IMAGE = flags.option(
    None,
    "--image",
    "-i",
    applies=flags.RESUMED,
    help="Image alias, tag, reference or glob (repeatable).",
)
_JOB = flags.option(
    None, "--job", "-j", applies=flags.RESUMED, help="A job spec YAML (jobs/*.yaml)."
)
_SUITE = flags.option(
    None,
    "--suite",
    "-s",
    applies=flags.RESUMED,
    help="Suite(s) to run with --image [default: smoke].",
)
_CHECK = flags.option(
    None, "--check", "-k", applies=flags.RESUMED, help="Only checks matching these globs."
)
_DEADLINE = flags.option(
    120.0,
    applies=flags.RESUMED,
    callback=flags.seconds("--deadline"),
    help="Seconds per check before it is a timeout (at most a week).",
)
_TIMEOUT = flags.option(
    None,
    applies=flags.RESUMED,
    callback=flags.seconds("--timeout"),
    help="Seconds for a whole suite's container (at most a week).",
)
_ATTEMPTS = flags.option(
    1,
    applies=flags.RESUMED,
    callback=flags.integer("--attempts", 1, 10),
    help="Attempts per failing check, 1 to 10 (mixed outcomes are flaky).",
)
_PROFILING_CAPS = flags.option(
    False,
    "--profiling-caps",
    applies=Applies(not_with=(RESUME, CPU_ONLY)),
    help="Add CAP_SYS_ADMIN to the profiler suite's "
    "GPU containers (never another suite's): ncu's performance counters where "
    "the driver keeps them to admins. A security cost: docs/architecture.md.",
)
_JUNIT = typer.Option(None, "--junit", callback=flags.JUNIT_FILE, help="Also write JUnit XML here.")
_KNOWN_ISSUES = typer.Option(
    None,
    "--known-issues",
    help="Known-issues YAML: a failure a live entry "
    "excuses is <skipped> in --junit with its reason and does not gate.",
)
_GATE = typer.Option(
    True, "--gate/--no-gate", help="Exit 1 when a check fails, crashes or times out."
)
_ALLOW_EMPTY = typer.Option(
    False,
    "--allow-empty",
    help="Exit 0 when nothing was tested (every check skipped, unsupported or n/a); "
    "without it such a run is exit 1.",
)
_MATRIX = flags.option(
    True,
    "--matrix/--no-matrix",
    applies=Applies(not_with=(JSON,), agrees=False),
    help="Print the matrix of this run.",
)
_RESUME = typer.Option(
    None,
    "--resume",
    help="Finish the remaining tasks of an interrupted batch (a batch id, or a run id of it).",
)
_WORKLOAD_ROOT = flags.option(
    None,
    "--workload-root",
    applies=Applies(needs=JOB, not_with=(RESUME,), why="only a job's pytest workloads ship files"),
    help="A directory whose files a job's pytest "
    "workloads may ship, besides the job file's own (repeatable).",
)


@where_options
def run(
    image: list[str] = _IMAGE,
    job: Path = _JOB,
    suite: list[str] = _SUITE,
    check: list[str] = _CHECK,
    deadline: float = _DEADLINE,
    timeout: float = _TIMEOUT,
    attempts: int = _ATTEMPTS,
    profiling_caps: bool = _PROFILING_CAPS,
    junit: Path = _JUNIT,
    known_issues: Path = _KNOWN_ISSUES,
    gate: bool = _GATE,
    allow_empty: bool = _ALLOW_EMPTY,
    show_matrix: bool = _MATRIX,
    db: str = DbOption,
    as_json: bool = JsonOption,
    catalog: Path = CatalogOption,
    resume: str = _RESUME,
    workload_root: list[Path] = _WORKLOAD_ROOT,
    *,
    where: Where,
) -> None:
    """Run suites in images on a matching host and store every result."""
    from ..catalog.adhoc import Selection
    from ..services import pipeline
    from .progress import RunViews
    from .signals import interruptible

    selection = Selection(
        job=job,
        images=tuple(image or ()),
        suites=tuple(suite or ()),
        checks=tuple(check or ()),
        deadline=deadline,
        timeout=timeout,
        attempts=attempts,
        workload_roots=tuple(workload_root or ()),
        profiling_caps=profiling_caps,
    )
    opts = pipeline.RunOptions(selection, None, where, resume, known_issues, gate, allow_empty)
    pipeline.check(opts)  # bad flags are exit 2 before anything is loaded
    cat = load_catalog(catalog)
    # Ctrl-C / SIGTERM: containers removed, exit 130 / 143
    with interruptible():
        try:
            rep = pipeline.run(opts, cat, deferred_sessions(db), RunViews(err, quiet=as_json))
        except InfrastructureError as exc:  # exit 3 still writes --junit, with the error
            if junit is not None:
                from ..render.junit import error_junit

                write_output(error_junit(exc.message, exc.hint), junit)
            raise
    if rep.resumed:
        err.print(f"resumed batch {rep.resumed}")
    if junit:
        write_output(rep.junit, junit)
    if as_json:
        print_json(rep.json)
    else:
        for line in rep.lines:
            err.print(line)
        if show_matrix:
            write_output(rep.matrix_md, None)
    end_with(rep.outcome)
