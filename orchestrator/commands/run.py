"""valorch run: validate images now (a job spec, or --image with --suite)."""

from __future__ import annotations

from pathlib import Path

import typer

from ..catalog import load_job, validate_suites
from ..errors import InfrastructureError, InputError
from ..executors.host import HostExecutor
from ..hosts import detect_local
from ..render.junit import results_junit
from ..scheduler import PlannedRun, execute, plan
from ..resume import resume as resume_batch
from ..host_inventory import resolve_hosts
from .progress import LiveReporter
from ..spec import JobSpec, SuiteRef
from ..store import queries
from . import views
from .common import CatalogOption, DbOption, JsonOption, err, load_catalog, print_json, sessions, write_output


def run(
    image: list[str] = typer.Option(None, "--image", "-i", help="Image alias, tag, reference or glob (repeatable)."),
    job: Path = typer.Option(None, "--job", "-j", help="A job spec YAML (jobs/*.yaml)."),
    suite: list[str] = typer.Option(None, "--suite", "-s", help="Suite(s) to run with --image [default: smoke]."),
    check: list[str] = typer.Option(None, "--check", "-k", help="Only checks matching these globs."),
    deadline: float = typer.Option(120.0, help="Seconds per check before it is a timeout."),
    timeout: float = typer.Option(None, help="Seconds for a whole suite's container."),
    attempts: int = typer.Option(1, help="Attempts per failing check (mixed outcomes are flaky)."),
    cpu_only: bool = typer.Option(False, "--cpu-only", help="Run GPU images on a CPU host; GPU checks are 'skip'."),
    junit: Path = typer.Option(None, "--junit", help="Also write JUnit XML here."),
    gate: bool = typer.Option(True, "--gate/--no-gate", help="Exit 1 when a check fails, crashes or times out."),
    show_matrix: bool = typer.Option(True, "--matrix/--no-matrix", help="Print the matrix of this run."),
    db: str = DbOption, as_json: bool = JsonOption, catalog: Path = CatalogOption,
    executor: str = typer.Option("docker", "--executor", help="docker (this machine's engine) or slurm (sbatch jobs)."),
    partition: str = typer.Option(None, "--partition", help="Slurm partition for --executor slurm."),
    hosts_file: Path = typer.Option(None, "--hosts", envvar="VALORCH_HOSTS",
                                    help="Host inventory YAML (examples/hosts.yaml) [default: this machine]."),
    resume: str = typer.Option(None, "--resume", help="Finish the remaining tasks of an interrupted batch "
                               "(a batch id, or a run id of it)."),
    retries: int = typer.Option(2, "--retries", min=0, help="Re-runs on another host after an infrastructure error."),
    slurm_spool: Path = typer.Option(None, "--slurm-spool", help="Directory the Slurm nodes share "
                                     "(probe archive, job output) [default: ./results/slurm]."),
    pull: str = typer.Option("missing", "--pull", help="missing: pull absent images; always: pull every time; "
                             "never: only what the engine has. A pinned digest is pulled and run as repo@sha256."),
    ca: Path = typer.Option(None, "--ca", help="CA file for the registry's TLS [default: certs.d/<registry>/ca.crt]."),
) -> None:
    """Run suites in images on a matching host and store every result."""
    from ..services.pull import check_policy

    check_policy(pull)
    cat = load_catalog(catalog)
    if resume:
        if job or image:
            raise InputError("--resume takes the job from the stored batch", "drop --job/--image")
        return _resume(resume, cat, hosts_file, retries, db, as_json, junit, gate, show_matrix)
    spec = _job(cat, job, image, suite, check, deadline, timeout, attempts)
    factory = sessions(db)
    summaries = execute_job(spec, cat, factory, cpu_only=cpu_only, executor=executor, partition=partition,
                            hosts_file=hosts_file, retries=retries, slurm_spool=slurm_spool, quiet=as_json,
                            pull=pull, ca=ca)
    _report(summaries, factory, as_json, junit, gate, show_matrix)


def execute_job(spec: JobSpec, cat, factory, *, cpu_only: bool = False, executor: str = "docker",
                partition: str | None = None, hosts_file: Path | None = None, retries: int = 2,
                slurm_spool: Path | None = None, quiet: bool = False, pull: str = "missing",
                ca: Path | None = None) -> list:
    """Plan a job on its hosts (this machine, a hosts file, or Slurm's nodes), run it with
    the live view, and return the run summaries. Shared by ``run`` and ``qualify``."""
    if executor not in ("docker", "slurm"):
        raise InputError(f"unknown --executor {executor!r}", "use docker or slurm")
    if executor == "slurm":  # Slurm's nodes are the hosts; it places each job itself
        from ..executors import slurm_executor as se

        cluster = se.SlurmCluster(partition=partition)
        planned = se.plan_on_slurm(spec, cat, cluster, cpu_only=cpu_only)
        remote = se.SlurmExecutor(cluster, slurm_spool or se.default_spool(), labels=spec.labels)
    else:
        inventory = resolve_hosts(hosts_file)
        with factory() as session:
            hist = queries.suite_durations(session)
        inventory, quarantined = _preflight(spec, cat, inventory, cpu_only, quiet)
        try:
            planned = plan(spec, cat, inventory, detect_local(), cpu_only=cpu_only, history=hist)
        except InfrastructureError as exc:
            if not quarantined:
                raise
            raise type(exc)(exc.message + "\nquarantined for this batch: " + "; ".join(
                f"{v.host} ({v.reason})" for v in quarantined), exc.hint) from None
        if any(pr.image.executor != "host" for pr in planned):
            _reap(inventory, factory, None)
        planned, staged = _stage(planned, pull, ca, quiet)

    def executor_for(pr: PlannedRun):
        if executor == "slurm" and pr.image.executor != "host":
            return remote
        return local_executor(pr)

    with LiveReporter(err, disable=quiet) as reporter:
        if executor == "slurm":  # no retries elsewhere: Slurm already chose among its nodes
            return execute(planned, spec, factory, executor_for, reporter)
        summaries = execute(planned, spec, factory, executor_for, reporter, hosts=inventory, retries=retries,
                            history=hist)
    _record_images(factory, summaries, staged)
    return summaries


def _preflight(spec: JobSpec, cat, inventory, cpu_only: bool, quiet: bool):
    """L0 on every host with GPUs the batch needs; a failing host is quarantined for the batch:
    no task goes there and the report says why."""
    from ..services.preflight import quarantine

    backends = set() if cpu_only else {i.backend for i in cat.select(spec.images) if i.executor == "docker"}
    kept, failed = quarantine(inventory, backends)
    for v in failed:
        err.print(f"[yellow]quarantined[/yellow] {v.host} for this batch: {v.reason}")
    return kept, failed


def _stage(planned, policy: str, ca: Path | None, quiet: bool):
    """Every image on its host before anything is queued (pull, verify the digest)."""
    from ..registry import RegistryClient
    from ..services.pull import stage_planned
    from .progress import PullProgress

    if not any(pr.image.executor == "docker" and not pr.image.local for pr in planned):
        return planned, {}
    with PullProgress(err, disable=quiet) as progress:
        return stage_planned(planned, policy, RegistryClient(ca=str(ca) if ca else None), progress)


def _record_images(factory, summaries, staged) -> None:
    """Both digests on each run: the tag's (index) and the platform manifest that ran."""
    with factory() as session:
        for s in summaries:
            got = staged.get((s.host, s.image))
            if got is not None:
                queries.merge_run_meta(session, s.run_id, "image", got.meta())
        session.commit()


def _resume(ref: str, cat, hosts_file: Path | None, retries: int, db, as_json: bool, junit: Path | None,
            gate: bool, show_matrix: bool) -> None:
    inventory = resolve_hosts(hosts_file)
    factory = sessions(db)

    with factory() as session:
        first = queries.get_run(session, ref)
        batch = first.batch if first is not None else ref
    _reap(inventory, factory, batch)
    with LiveReporter(err, disable=as_json) as reporter:
        batch, summaries = resume_batch(ref, factory, cat, inventory, local_executor, reporter, retries=retries)
    err.print(f"resumed batch {batch}")
    _report(summaries, factory, as_json, junit, gate, show_matrix)


def local_executor(pr: PlannedRun):
    """The host interpreter for the ``host`` image, else the host's Docker engine. The Docker
    SDK is imported here, not at start-up: commands that run no container never load it."""
    if pr.image.executor == "host":
        return HostExecutor(pr.host)
    from ..executors.docker import DockerExecutor

    return DockerExecutor(pr.host)


def _reap(inventory, factory, batch: str | None) -> None:
    """Remove leftover valorch containers: those of ``batch`` (on --resume), and those of
    runs this database knows as finished or interrupted (a killed valorch leaves them)."""
    from sqlalchemy import select

    from ..executors.docker import connect, reap
    from ..store.models import Run

    with factory() as session:
        q = select(Run.id).where(Run.batch == batch) if batch else select(Run.id).where(Run.state != "running")
        known = set(session.scalars(q))
    for host in inventory:
        try:
            client = connect(host, timeout=10)
        except Exception:  # noqa: BLE001 - an unreachable engine is reported when a task goes there
            continue
        for c in client.containers.list(all=True, filters={"label": "org.valorch.run"}):
            run_id = (c.labels or {}).get("org.valorch.run")
            if run_id in known:
                reap(client, run_id)


def _report(summaries, factory, as_json: bool, junit: Path | None, gate: bool, show_matrix: bool) -> None:
    with factory() as session:
        runs = [queries.get_run(session, s.run_id) for s in summaries]
        results = {r.id: queries.run_results(session, r.id) for r in runs}
        if junit:
            write_output(results_junit(runs, results), junit)
        if as_json:
            print_json([views.run_json(r, results[r.id]) for r in runs])
        else:
            for s in summaries:
                err.print(views.summary_line(s))
            if show_matrix:
                write_output(views.matrix_markdown(runs, results), None)
    if gate and any(s.failed for s in summaries):
        raise typer.Exit(1)
    if any(s.infra_errors for s in summaries):
        err.print("[yellow]infrastructure errors: the affected checks are 'error' (inconclusive)[/yellow]")
        raise typer.Exit(3)


def _job(cat, job: Path | None, images: list[str] | None, suites: list[str] | None, checks: list[str] | None,
         deadline: float, timeout: float | None, attempts: int) -> JobSpec:
    if job and images:
        raise InputError("--job and --image are exclusive", "put the images in the job spec, or drop --job")
    if job:
        if suites or checks:
            raise InputError("--suite/--check apply to --image runs; a job spec names its own suites")
        return load_job(job, cat)
    if not images:
        raise InputError("nothing to run: pass --image NAME or --job FILE",
                         "e.g. valorch run --image host, or valorch run --job jobs/smoke.yaml")
    refs = tuple(SuiteRef(name=s, checks=tuple(checks or ()), deadline=deadline, timeout=timeout, attempts=attempts)
                 for s in (suites or ["smoke"]))
    validate_suites(refs)
    return JobSpec(name="adhoc", images=tuple(images), suites=refs)
