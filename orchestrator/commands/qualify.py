"""valorch qualify: run a release job, diff it against a baseline, write the reports, gate.

Exit 0 only when qualified; 1 not qualified (an unexcused failing check, a check still
failing since the baseline, a timing regression, lost coverage, tampered output, not ready
with --readiness, nothing to judge without --allow-empty: the service's verdict decides,
once, and every report below renders it); 2 bad input (job, baseline,
known issues); 3 infrastructure errors and nothing else, or a qualified release whose
--notify did not arrive.
"""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import typer

from .. import satellites
from . import flags
from .common import (
    DEFAULT_THRESHOLD,
    EXECUTOR_HELP,
    CatalogOption,
    DbOption,
    ExecutorChoice,
    NotifyOption,
    WindowOption,
    end_with,
    err,
    load_catalog,
    local_images,
    say,
    sessions,
    write_output,
)


def qualify(
    job: Path = typer.Option(None, "--job", "-j", help="The release job spec (jobs/release.yaml)."),
    image: str = typer.Option(
        None,
        "--image",
        "-i",
        help="A candidate image not in the catalog (a tag or "
        "digest): runs the job's suites (or smoke) on it alone, no catalog edit.",
    ),
    baseline: str = typer.Option(
        ..., "--baseline", "-b", help="Baseline name, matrix version or run id to compare with."
    ),
    known_issues: Path = typer.Option(
        None, "--known-issues", help="Known-issues YAML (expected failures)."
    ),
    out_dir: Path = typer.Option(
        None,
        "--out-dir",
        callback=flags.OUT_DIR,
        help="Reports here [default: results/qualify-<time>/].",
    ),
    threshold: float = typer.Option(
        DEFAULT_THRESHOLD,
        callback=flags.number("--threshold", 0, 10, lo_open=True),
        help="Timing ratio threshold (0.05 = 5 %), above 0, at most 10.",
    ),
    cpu_only: bool = typer.Option(False, "--cpu-only", help="Run GPU images on a CPU host."),
    hosts_file: Path = typer.Option(
        None, "--hosts", envvar="VALORCH_HOSTS", help="Host inventory YAML [default: this machine]."
    ),
    executor: ExecutorChoice = typer.Option(
        "docker", "--executor", callback=flags.executor_available, help=EXECUTOR_HELP
    ),
    partition: str = typer.Option(
        None, "--partition", help="Slurm partition for --executor slurm."
    ),
    allow_coverage_loss: bool = typer.Option(
        False,
        "--allow-coverage-loss",
        help="Qualify although baseline checks are missing from the "
        "head or went pass → unsupported/partial/skip.",
    ),
    allow_known_failures: bool = typer.Option(
        False,
        "--allow-known-failures",
        help="Qualify although checks that failed in the baseline "
        "still fail (listed first as 'still failing').",
    ),
    readiness: str = typer.Option(
        None,
        "--readiness",
        help="Also gate on readiness: the job's pass rates over --window against this "
        "basis (a matrix version, baseline, or window:DURATION); docs/readiness.md.",
    ),
    readiness_window: str = WindowOption,
    allow_empty: bool = typer.Option(
        False,
        "--allow-empty",
        help="Qualify although the candidate proved nothing (no results, no check selected, "
        "every check skipped, unsupported or not applicable) [default: not qualified].",
    ),
    notify: list[str] = NotifyOption,
    db: str = DbOption,
    catalog: Path = CatalogOption,
) -> None:
    """Run the job, diff the new runs against the baseline, write report.md/.html/.junit.xml; gate."""
    from ..render.diff import diff_html, diff_junit, diff_md, qualify_json
    from ..services import qualify as service
    from ..services import triage
    from ..services.candidate import candidate_job
    from ..services.diff import NoResultsError
    from ..services.run import Where
    from .progress import LiveReporter
    from .signals import interruptible
    from .terminal import print_term

    # the notify satellite, loaded where --notify is given a bad --notify is exit 2 before an hour of runs
    notify_service: Any = satellites.load("notify", "service", "--notify") if notify else None
    targets = notify_service.parse_targets(notify) if notify_service else ()
    if readiness:  # a bad window is exit 2 before an hour of runs
        from ..services.readiness import duration

        duration(readiness_window, "--window")
    cat = load_catalog(catalog)
    spec = candidate_job(cat, job, image)
    title = f"valorch qualify {spec.name} against {baseline}"
    opts = service.QualifyOptions(
        baseline=baseline,
        known_issues=known_issues,
        threshold=threshold,
        allow_coverage_loss=allow_coverage_loss,
        allow_known_failures=allow_known_failures,
        readiness=readiness,
        readiness_window=readiness_window,
        allow_empty=allow_empty,
        where=Where(
            cpu_only=cpu_only, executor=executor.value, partition=partition, hosts_file=hosts_file
        ),
    )
    factory = sessions(db)
    try:
        with interruptible(), LiveReporter(err) as reporter:
            done = service.qualify(
                spec,
                cat,
                factory,
                opts,
                reporter=reporter,
                on_warning=lambda w: err.print(f"warning: {w}", markup=False),
            )
    except NoResultsError as exc:
        if targets:  # zero ingested results: a failure, never a success
            notify_service.post_empty(targets, title, exc.message, say)
        raise
    for line in done.lines:
        err.print(line)
    report = done.report
    why = triage.for_runs(
        factory, report.head.runs, report.base
    )  # each red check of the report says why
    out_dir = out_dir or Path("results") / f"qualify-{datetime.now():%Y%m%d-%H%M%S}"
    verdict = done.verdict  # the one decision: every sink below renders it
    write_output(diff_md(report, verdict, why), out_dir / "report.md")
    write_output(diff_html(report, verdict, why), out_dir / "report.html")
    write_output(diff_junit(report, verdict, why), out_dir / "report.junit.xml")
    closable = _closable(factory, known_issues, spec.name)
    if done.readiness is not None:
        from ..render.readiness import render_md

        write_output(render_md(done.readiness.report), out_dir / "readiness.md")
    write_output(
        qualify_json(
            report,
            verdict,
            why,
            job=spec.name,
            baseline=baseline,
            closable=closable,
            readiness=done.readiness.summary if done.readiness is not None else None,
            finished=f"{datetime.now(timezone.utc):%Y-%m-%dT%H:%M:%SZ}",
        ),
        out_dir / "qualify.json",
    )
    print_term(report, verdict, why)
    reached = (
        notify_service.post_report(
            factory,
            targets,
            notify_service.Posting(
                report,
                title,
                verdict,
                why,
                infra=done.infra_errors,
                report_path=str(out_dir / "report.html"),
            ),
            say,
            local=local_images(),
        )
        if targets
        else True
    )
    end_with(done.outcome(out_dir, notified=reached))


def _closable(factory: object, path: Path | None, job: str) -> list[str]:
    """The known issues whose checks no longer fail (``known-issues status`` says they can
    close), each said on stderr: the qualify report names them."""
    if path is None:
        return []
    from ..services.known_issues_status import status
    from ..services.run import load_known_issues

    issues = load_known_issues(path)
    found = [s for s in status(factory, issues, job=job) if s.can_close] if issues else []  # type: ignore[arg-type]
    for s in found:
        err.print(f"known issue {s.issue.check} can close: {s.why}", markup=False)
    return [s.issue.check for s in found]
