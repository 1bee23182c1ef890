"""valorch run: validate images now (a job spec, or --image with --suite)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from ..applies import CPU_ONLY, JOB, JSON, RESUME, Applies
from ..errors import InfrastructureError, InputError
from . import flags
from .common import (
    EXECUTOR_HELP,
    CatalogOption,
    DbOption,
    ExecutorChoice,
    JsonOption,
    check_output,
    deferred_sessions,
    end_with,
    err,
    load_catalog,
    print_json,
    write_output,
)

if TYPE_CHECKING:
    from ..services.preflight import Verdict
    from ..services.run import RunReport
    from .progress import LiveReporter, PullProgress


def run(
    image: list[str] = flags.option(
        None,
        "--image",
        "-i",
        applies=flags.RESUMED,
        help="Image alias, tag, reference or glob (repeatable).",
    ),
    job: Path = flags.option(
        None, "--job", "-j", applies=flags.RESUMED, help="A job spec YAML (jobs/*.yaml)."
    ),
    suite: list[str] = flags.option(
        None,
        "--suite",
        "-s",
        applies=flags.RESUMED,
        help="Suite(s) to run with --image [default: smoke].",
    ),
    check: list[str] = flags.option(
        None, "--check", "-k", applies=flags.RESUMED, help="Only checks matching these globs."
    ),
    deadline: float = flags.option(
        120.0,
        applies=flags.RESUMED,
        callback=flags.seconds("--deadline"),
        help="Seconds per check before it is a timeout (at most a week).",
    ),
    timeout: float = flags.option(
        None,
        applies=flags.RESUMED,
        callback=flags.seconds("--timeout"),
        help="Seconds for a whole suite's container (at most a week).",
    ),
    attempts: int = flags.option(
        1,
        applies=flags.RESUMED,
        callback=flags.integer("--attempts", 1, 10),
        help="Attempts per failing check, 1 to 10 (mixed outcomes are flaky).",
    ),
    cpu_only: bool = flags.option(
        False,
        "--cpu-only",
        applies=flags.RESUMED,
        help="Run GPU images on a CPU host; GPU checks are 'skip'.",
    ),
    profiling_caps: bool = flags.option(
        False,
        "--profiling-caps",
        applies=Applies(not_with=(RESUME, CPU_ONLY)),
        help="Add CAP_SYS_ADMIN to the profiler suite's "
        "GPU containers (never another suite's): ncu's performance counters where "
        "the driver keeps them to admins. A security cost: docs/architecture.md.",
    ),
    junit: Path = typer.Option(
        None,
        "--junit",
        callback=flags.JUNIT_FILE,
        help="Also write JUnit XML here.",
    ),
    known_issues: Path = typer.Option(
        None,
        "--known-issues",
        help="Known-issues YAML: a failure a live entry "
        "excuses is <skipped> in --junit with its reason and does not gate.",
    ),
    gate: bool = typer.Option(
        True, "--gate/--no-gate", help="Exit 1 when a check fails, crashes or times out."
    ),
    allow_empty: bool = typer.Option(
        False,
        "--allow-empty",
        help="Exit 0 when nothing was tested (every check skipped, unsupported or n/a); "
        "without it such a run is exit 1.",
    ),
    show_matrix: bool = flags.option(
        True,
        "--matrix/--no-matrix",
        applies=Applies(not_with=(JSON,), agrees=False),
        help="Print the matrix of this run.",
    ),
    db: str = DbOption,
    as_json: bool = JsonOption,
    catalog: Path = CatalogOption,
    executor: ExecutorChoice = flags.option(
        "docker",
        "--executor",
        applies=flags.RESUMED,
        callback=flags.executor_available,
        help=EXECUTOR_HELP,
    ),
    namespace: str = flags.option(
        "default", "--namespace", applies=flags.KUBERNETES, help="Kubernetes namespace."
    ),
    partition: str = flags.option(
        None, "--partition", applies=flags.SLURM, help="Slurm partition."
    ),
    rdma_resource: str = flags.option(
        None,
        "--rdma-resource",
        applies=Applies(
            ("kubernetes",),
            not_with=(RESUME, CPU_ONLY),
            why="a hosts file's rdma, or a Slurm node's feature rdma, opts in elsewhere",
        ),
        callback=flags.extended_resource("--rdma-resource"),
        help="Kubernetes: the RDMA device plugin's resource (e.g. rdma/hca) that a multi-node "
        "GPU task's pods request, with CAP_IPC_LOCK. A security cost: docs/architecture.md.",
    ),
    hosts_file: Path = flags.option(
        None,
        "--hosts",
        applies=flags.HOSTS,
        envvar="VALORCH_HOSTS",
        help="Host inventory YAML (examples/hosts.yaml) [default: this machine].",
    ),
    resume: str = typer.Option(
        None,
        "--resume",
        help="Finish the remaining tasks of an interrupted batch (a batch id, or a run id of it).",
    ),
    retries: int = flags.option(
        2,
        "--retries",
        applies=flags.RETRIES,
        callback=flags.integer("--retries", 0, 100),
        help="Re-runs on another host after an infrastructure error (0 to 100).",
    ),
    repeat: int = flags.option(
        1,
        "--repeat",
        applies=flags.RESUMED,
        callback=flags.integer("--repeat", 1, 100),
        help="Run the whole job this many times, one after the other (1 to 100): N runs "
        "of each image for `valorch diff latest:ALIAS:N`, which pools them.",
    ),
    slurm_spool: Path = flags.option(
        None,
        "--slurm-spool",
        applies=flags.SLURM,
        help="Directory the Slurm nodes share "
        "(probe archive, job output) [default: ./results/slurm].",
    ),
    pull: str = flags.option(
        "missing",
        "--pull",
        applies=flags.PULLS,
        metavar="<missing|always|never>",
        help="missing: pull absent images; always: pull every time; "
        "never: only what the engine has. A pinned digest is pulled and run as repo@sha256.",
    ),
    ca: Path = flags.option(
        None,
        "--ca",
        applies=flags.PULLS,
        help="CA file for the registry's TLS [default: certs.d/<registry>/ca.crt].",
    ),
    workload_root: list[Path] = flags.option(
        None,
        "--workload-root",
        applies=Applies(
            needs=JOB, not_with=(RESUME,), why="only a job's pytest workloads ship files"
        ),
        help="A directory whose files a job's pytest "
        "workloads may ship, besides the job file's own (repeatable).",
    ),
    host_secrets_visible: bool = typer.Option(
        False,
        "--host-secrets-visible",
        help="Run host workloads although a secret valorch holds is in their reach "
        "(/proc): knowingly. Otherwise such a run stops first (docs/architecture.md).",
    ),
) -> None:
    """Run suites in images on a matching host and store every result."""
    from ..catalog.adhoc import Selection
    from ..services import run_entry as service
    from ..services.run import Where
    from .signals import interruptible

    opts = service.RunOptions(
        selection=Selection(
            job=job,
            images=tuple(image or ()),
            suites=tuple(suite or ()),
            checks=tuple(check or ()),
            deadline=deadline,
            timeout=timeout,
            attempts=attempts,
            workload_roots=tuple(workload_root or ()),
            profiling_caps=profiling_caps,
        ),
        where=Where(
            executor=executor.value,
            cpu_only=cpu_only,
            hosts_file=hosts_file,
            partition=partition,
            slurm_spool=slurm_spool,
            namespace=namespace,
            rdma_resource=rdma_resource,
            secrets_visible=host_secrets_visible,
        ),
        pull=pull,
        ca=ca,
        resume=resume,
        retries=retries,
        repeat=repeat,
        known_issues=known_issues,
        gate=gate,
        allow_empty=allow_empty,
    )
    service.check(opts)  # bad flags are exit 2 before anything is loaded
    _check_junit(junit)
    cat = load_catalog(catalog)
    # Ctrl-C / SIGTERM: containers removed, exit 130 / 143
    with interruptible(), junit_on_error(junit):
        rep = service.run(opts, cat, deferred_sessions(db), _Progress(quiet=as_json))
    if rep.resumed:
        err.print(f"resumed batch {rep.resumed}")
    _print(rep, as_json, junit, show_matrix)
    end_with(rep.outcome)


class _Progress:
    """The run's terminal views on stderr (none with --json)."""

    def __init__(self, quiet: bool) -> None:
        self.quiet = quiet

    def pulls(self) -> PullProgress:
        from .progress import PullProgress

        return PullProgress(err, disable=self.quiet)

    def tasks(self) -> LiveReporter:
        from .progress import LiveReporter

        return LiveReporter(err, disable=self.quiet)

    def quarantined(self, verdict: Verdict) -> None:
        err.print(f"[yellow]quarantined[/yellow] {verdict.host} for this batch: {verdict.reason}")

    def warning(self, text: str) -> None:
        err.print(f"warning: {text}", markup=False)


def _check_junit(junit: Path | None) -> None:
    """--junit names a file to write: a directory is exit 2 before anything runs."""
    if junit is not None and junit.is_dir():
        raise InputError(
            f"--junit {junit} is a directory",
            f"name a file, e.g. --junit {junit / 'valorch.junit.xml'}",
        )
    check_output("--junit", junit)  # a FIFO, /dev/full, a symlink loop


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


def _print(rep: RunReport, as_json: bool, junit: Path | None, show_matrix: bool) -> None:
    if junit:
        write_output(rep.junit, junit)
    if as_json:
        print_json(rep.json)
    else:
        for line in rep.lines:
            err.print(line)
        if show_matrix:
            write_output(rep.matrix_md, None)
