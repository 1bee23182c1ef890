"""valorch run: validate images now (a job spec, or --image with --suite)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from enum import Enum
from pathlib import Path
from typing import Any

import typer

from ..errors import InfrastructureError, InputError
from . import flags
from .common import (
    CatalogOption,
    DbOption,
    JsonOption,
    deferred_sessions,
    err,
    load_catalog,
    print_json,
    write_output,
)


class ExecutorChoice(str, Enum):
    """--executor: the names of ``executors.REGISTRY`` (a typer choice)."""

    host = "host"
    docker = "docker"
    slurm = "slurm"
    kubernetes = "kubernetes"


EXECUTOR_HELP = (
    "host (the local interpreter), docker (this machine's engine or a hosts file's), slurm "
    "(sbatch jobs on your cluster) or kubernetes (a batch/v1 Job per task; its manifests are "
    "checked against the client's models, but it has NOT been run against a live cluster: "
    "docs/kubernetes.md)."
)


def run(
    image: list[str] = typer.Option(
        None, "--image", "-i", help="Image alias, tag, reference or glob (repeatable)."
    ),
    job: Path = typer.Option(None, "--job", "-j", help="A job spec YAML (jobs/*.yaml)."),
    suite: list[str] = typer.Option(
        None, "--suite", "-s", help="Suite(s) to run with --image [default: smoke]."
    ),
    check: list[str] = typer.Option(
        None, "--check", "-k", help="Only checks matching these globs."
    ),
    deadline: float = typer.Option(
        120.0,
        callback=flags.seconds("--deadline"),
        help="Seconds per check before it is a timeout (at most a week).",
    ),
    timeout: float = typer.Option(
        None,
        callback=flags.seconds("--timeout"),
        help="Seconds for a whole suite's container (at most a week).",
    ),
    attempts: int = typer.Option(
        1,
        callback=flags.integer("--attempts", 1, 10),
        help="Attempts per failing check, 1 to 10 (mixed outcomes are flaky).",
    ),
    cpu_only: bool = typer.Option(
        False, "--cpu-only", help="Run GPU images on a CPU host; GPU checks are 'skip'."
    ),
    profiling_caps: bool = typer.Option(
        False,
        "--profiling-caps",
        help="Add CAP_SYS_ADMIN to the profiler suite's "
        "GPU containers (never another suite's): ncu's performance counters where "
        "the driver keeps them to admins. A security cost: docs/architecture.md.",
    ),
    junit: Path = typer.Option(None, "--junit", help="Also write JUnit XML here."),
    known_issues: Path = typer.Option(
        None,
        "--known-issues",
        help="Known-issues YAML: a failure a live entry "
        "excuses is <skipped> in --junit with its reason and does not gate.",
    ),
    gate: bool = typer.Option(
        True, "--gate/--no-gate", help="Exit 1 when a check fails, crashes or times out."
    ),
    show_matrix: bool = typer.Option(
        True, "--matrix/--no-matrix", help="Print the matrix of this run."
    ),
    db: str = DbOption,
    as_json: bool = JsonOption,
    catalog: Path = CatalogOption,
    executor: ExecutorChoice = typer.Option("docker", "--executor", help=EXECUTOR_HELP),
    namespace: str = typer.Option(
        "default", "--namespace", help="Kubernetes namespace for --executor kubernetes."
    ),
    partition: str = typer.Option(
        None, "--partition", help="Slurm partition for --executor slurm."
    ),
    hosts_file: Path = typer.Option(
        None,
        "--hosts",
        envvar="VALORCH_HOSTS",
        help="Host inventory YAML (examples/hosts.yaml) [default: this machine].",
    ),
    resume: str = typer.Option(
        None,
        "--resume",
        help="Finish the remaining tasks of an interrupted batch (a batch id, or a run id of it).",
    ),
    retries: int = typer.Option(
        2,
        "--retries",
        callback=flags.integer("--retries", 0, 100),
        help="Re-runs on another host after an infrastructure error (0 to 100).",
    ),
    repeat: int = typer.Option(
        1,
        "--repeat",
        callback=flags.integer("--repeat", 1, 100),
        help="Run the whole job this many times, one after the other (1 to 100): N runs "
        "of each image for `valorch diff latest:ALIAS:N`, which pools them.",
    ),
    slurm_spool: Path = typer.Option(
        None,
        "--slurm-spool",
        help="Directory the Slurm nodes share "
        "(probe archive, job output) [default: ./results/slurm].",
    ),
    pull: str = typer.Option(
        "missing",
        "--pull",
        help="missing: pull absent images; always: pull every time; "
        "never: only what the engine has. A pinned digest is pulled and run as repo@sha256.",
    ),
    ca: Path = typer.Option(
        None, "--ca", help="CA file for the registry's TLS [default: certs.d/<registry>/ca.crt]."
    ),
    workload_root: list[Path] = typer.Option(
        None,
        "--workload-root",
        help="A directory whose files a job's pytest "
        "workloads may ship, besides the job file's own (repeatable).",
    ),
) -> None:
    """Run suites in images on a matching host and store every result."""
    from ..services import run as service
    from ..services.pull import check_policy
    from .progress import LiveReporter, PullProgress
    from .signals import interruptible

    check_policy(pull)
    _check_junit(junit)
    issues = _known_issues(known_issues)
    cat = load_catalog(catalog)
    with (
        interruptible(),
        junit_on_error(junit),
    ):  # Ctrl-C / SIGTERM: containers removed, exit 130 / 143
        factory = deferred_sessions(db)
        if resume:
            if job or image or profiling_caps:
                raise InputError(
                    "--resume takes the job from the stored batch",
                    "drop --job/--image/--profiling-caps",
                )
            with LiveReporter(err, disable=as_json) as reporter:
                batch, summaries = service.resume(
                    resume, cat, factory, hosts_file=hosts_file, retries=retries, reporter=reporter
                )
        else:
            spec = _job(
                cat, job, image, suite, check, deadline, timeout, attempts, workload_root or ()
            )
            if profiling_caps:
                spec = _with_profiling_caps(spec)
            # preflight and pulls first (their own progress), then the live view of the tasks
            with PullProgress(err, disable=as_json) as progress:
                where = service.Where(
                    executor.value, cpu_only, hosts_file, partition, slurm_spool, namespace
                )
                staging = service.Staging(
                    pull,
                    str(ca) if ca else None,
                    on_pull=progress,
                    on_quarantine=lambda v: err.print(
                        f"[yellow]quarantined[/yellow] {v.host} for this batch: {v.reason}"
                    ),
                )
                placed = service.place_job(spec, cat, factory, where, staging)
            with LiveReporter(err, disable=as_json) as reporter:
                summaries = service.execute_placed(
                    placed, spec, factory, reporter=reporter, retries=retries, repeat=repeat
                )
    if resume:
        err.print(f"resumed batch {batch}")
    _report(service.report(factory, summaries, issues), as_json, junit, gate, show_matrix)


def _known_issues(path: Path | None) -> Any:
    """--known-issues, loaded before anything runs (a bad file is exit 2 now, not after the run)."""
    from ..services.run import load_known_issues

    return load_known_issues(path, lambda w: err.print(f"warning: {w}", markup=False))


def _check_junit(junit: Path | None) -> None:
    """--junit names a file to write: a directory is exit 2 before anything runs."""
    if junit is not None and junit.is_dir():
        raise InputError(
            f"--junit {junit} is a directory",
            f"name a file, e.g. --junit {junit / 'valorch.junit.xml'}",
        )


@contextmanager
def junit_on_error(junit: Path | None) -> Iterator[None]:
    """A run that ends in an infrastructure error (exit 3) still writes --junit, with the error."""
    try:
        yield
    except InfrastructureError as exc:
        if junit is not None:
            from ..render.junit import error_junit

            write_output(error_junit(exc.message, exc.hint), junit)
        raise


def _report(rep, as_json: bool, junit: Path | None, gate: bool, show_matrix: bool) -> None:  # noqa: ANN001
    if junit:
        write_output(rep.junit, junit)
    if as_json:
        print_json(rep.json)
    else:
        for line in rep.lines:
            err.print(line)
        if show_matrix:
            write_output(rep.matrix_md, None)
    for line in rep.protocol_errors:
        err.print(
            f"[red]{line}: results tampered with or cut at the output cap; these checks are 'error'[/red]"
        )
    code = exit_code(rep, gate)
    if code == 3 and rep.infra_errors:
        err.print(
            "[yellow]infrastructure errors: the affected checks are 'error' (inconclusive)[/yellow]"
        )
    if code:
        raise typer.Exit(code)


def exit_code(rep, gate: bool) -> int:  # noqa: ANN001
    """1 when gating and a check failed or its results were tampered with; else 3 for
    infrastructure errors and for tampered or flooded output (never 0: such a run proved nothing)."""
    if gate and (rep.failed or rep.protocol_errors):
        return 1
    return 3 if rep.protocol_errors or rep.infra_errors else 0


def _job(
    cat,
    job: Path | None,
    images: list[str] | None,
    suites: list[str] | None,
    checks: list[str] | None,
    deadline: float,
    timeout: float | None,
    attempts: int,
    workload_roots: Any = (),
) -> Any:
    from ..catalog.core import load_job, validate_check_globs, validate_suites
    from ..spec import JobSpec, SuiteRef

    if job and images:
        raise InputError(
            "--job and --image are exclusive", "put the images in the job spec, or drop --job"
        )
    if job:
        if suites or checks:
            raise InputError(
                "--suite/--check apply to --image runs; a job spec names its own suites"
            )
        return load_job(job, cat, workload_roots)
    if not images:
        raise InputError(
            "nothing to run: pass --image NAME or --job FILE",
            "e.g. valorch run --image host, or valorch run --job jobs/smoke.yaml",
        )
    refs = tuple(
        SuiteRef(
            name=s,
            checks=tuple(checks or ()),
            deadline=deadline,
            timeout=timeout,
            attempts=attempts,
        )
        for s in (suites or ["smoke"])
    )
    validate_suites(refs)
    validate_check_globs(refs, checks or ())
    return JobSpec(name="adhoc", images=tuple(images), suites=refs)


def _with_profiling_caps(spec: Any) -> Any:
    """--profiling-caps: the job's profiler suite asks for CAP_SYS_ADMIN; no profiler suite is exit 2."""
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
