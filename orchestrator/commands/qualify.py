"""valorch qualify: run a release job, diff it against a baseline, write the reports, gate.

Exit 0 only when qualified; 1 not qualified (an unexcused failing check, a check still
failing since the baseline, a timing regression, lost coverage, tampered output: the
service's ``Qualification`` decides, this prints); 2 bad input (job, baseline, known
issues); 3 infrastructure errors and nothing else.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

import typer

from . import flags
from .common import (
    DEFAULT_THRESHOLD,
    CatalogOption,
    DbOption,
    err,
    load_catalog,
    sessions,
    write_output,
)
from .diff import NotifyOption, local_images, print_term, say
from .run import EXECUTOR_HELP, ExecutorChoice


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
        None, "--out-dir", help="Reports here [default: results/qualify-<time>/]."
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
    executor: ExecutorChoice = typer.Option("docker", "--executor", help=EXECUTOR_HELP),
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
    notify: list[str] = NotifyOption,
    db: str = DbOption,
    catalog: Path = CatalogOption,
) -> None:
    """Run the job, diff the new runs against the baseline, write report.md/.html/.junit.xml; gate."""
    from rich.markup import escape

    from ..notify import targets as notify_targets
    from ..render.diff import diff_html, diff_junit, diff_md
    from ..services import notify as notify_service
    from ..services import qualify as service
    from ..services import triage
    from ..services.candidate import candidate_job
    from ..services.diff import NoResults
    from .progress import LiveReporter
    from .signals import interruptible

    targets = notify_targets.parse(notify or ())  # a bad --notify is exit 2 before an hour of runs
    cat = load_catalog(catalog)
    spec = candidate_job(cat, job, image)
    title = f"valorch qualify {spec.name} against {baseline}"
    factory = sessions(db)
    try:
        with interruptible(), LiveReporter(err) as reporter:
            outcome = service.qualify(
                spec,
                cat,
                factory,
                baseline,
                known_issues,
                threshold,
                reporter=reporter,
                on_warning=lambda w: err.print(f"warning: {w}", markup=False),
                allow_coverage_loss=allow_coverage_loss,
                allow_known_failures=allow_known_failures,
                cpu_only=cpu_only,
                executor=executor.value,
                partition=partition,
                hosts_file=hosts_file,
            )
    except NoResults as exc:
        if targets:  # zero ingested results: a failure, never a success
            notify_service.post_empty(targets, title, exc.message, say)
        raise
    for line in outcome.lines:
        err.print(line)
    report = outcome.report
    why = triage.for_runs(
        factory, report.head.runs, report.base
    )  # each red check of the report says why
    out_dir = out_dir or Path("results") / f"qualify-{datetime.now():%Y%m%d-%H%M%S}"
    write_output(diff_md(report, outcome.verdict, why), out_dir / "report.md")
    write_output(diff_html(report, outcome.verdict, why), out_dir / "report.html")
    write_output(diff_junit(report, outcome.verdict, why), out_dir / "report.junit.xml")
    write_output(
        json.dumps(
            {
                "job": spec.name,
                "baseline": baseline,
                "runs": list(report.head.runs),  # valorch attest --qualify
                "qualified": outcome.exit_code == 0,
                "reasons": list(outcome.reasons),
                "triage": {
                    f"{env} {check}": {"class": t.cls, "reason": t.reason}
                    for (env, check), t in sorted(why.items())
                },
                "finished": f"{datetime.now(timezone.utc):%Y-%m-%dT%H:%M:%SZ}",
            },
            indent=1,
        ),
        out_dir / "qualify.json",
    )
    print_term(report, outcome.verdict, why)
    reached = (
        notify_service.post_report(
            factory,
            targets,
            report,
            title,
            say,
            local=local_images(),
            infra=outcome.infra_errors,
            report_path=str(out_dir / "report.html"),
            verdict=outcome.verdict,
            why=why,
        )
        if targets
        else True
    )
    if outcome.exit_code == 1:
        err.print(
            f"[bold red]qualification failed[/bold red] against {escape(baseline)}; see {out_dir}/report.md"
        )
        for line in outcome.reasons:
            err.print(f"  {escape(line)}")
    elif outcome.exit_code == 3:
        err.print(
            "[yellow]infrastructure errors: the affected checks are inconclusive; not qualified[/yellow]"
        )
    else:
        err.print(f"[bold green]qualified[/bold green] against {escape(baseline)}")
        for line in outcome.reasons:  # allowed by a flag: said, never hidden
            err.print(f"  {escape(line)}")
    if outcome.exit_code:
        raise typer.Exit(outcome.exit_code)
    if not reached:
        raise typer.Exit(3)
