"""valorch qualify: run a release job, diff it against a baseline, write the reports, gate.

Exit 0 only when nothing regressed; 1 regressed; 2 bad input (job, baseline,
known issues); 3 infrastructure errors without a regression.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import typer

from .. import diff as engine
from .. import known_issues as ki
from ..catalog import load_job
from ..render.diff import diff_html, diff_junit, diff_md
from ..store import queries
from . import views
from ..notify import message
from ..notify import targets as notify_targets
from ..services import notify as notify_service
from .common import CatalogOption, DbOption, err, load_catalog, sessions, write_output
from .diff import NoResults, NotifyOption, head_images, notify_outcome, print_term, report_for, resolve, runs_side
from .run import execute_job


def qualify(job: Path = typer.Option(..., "--job", "-j", help="The release job spec (jobs/release.yaml)."),
            baseline: str = typer.Option(..., "--baseline", "-b",
                                         help="Baseline name, matrix version or run id to compare with."),
            known_issues: Path = typer.Option(None, "--known-issues", help="Known-issues YAML (expected failures)."),
            out_dir: Path = typer.Option(None, "--out-dir", help="Reports here [default: results/qualify-<time>/]."),
            threshold: float = typer.Option(engine.DEFAULT_THRESHOLD, help="Timing ratio threshold (0.05 = 5 %)."),
            cpu_only: bool = typer.Option(False, "--cpu-only", help="Run GPU images on a CPU host."),
            hosts_file: Path = typer.Option(None, "--hosts", envvar="VALORCH_HOSTS",
                                            help="Host inventory YAML [default: this machine]."),
            executor: str = typer.Option("docker", "--executor", help="docker or slurm (as for valorch run)."),
            partition: str = typer.Option(None, "--partition", help="Slurm partition for --executor slurm."),
            notify: list[str] = NotifyOption, db: str = DbOption, catalog: Path = CatalogOption) -> None:
    """Run the job, diff the new runs against the baseline, write report.md/.html/.junit.xml; gate."""
    targets = notify_targets.parse(notify or ())  # a bad --notify is exit 2 before any run
    cat = load_catalog(catalog)
    spec = load_job(job, cat)
    if known_issues:
        ki.load(known_issues)  # bad input fails before an hour of runs, not after
    factory = sessions(db)
    with factory() as session:
        base = resolve(session, baseline)  # unknown baseline: exit 2 now
    summaries = execute_job(spec, cat, factory, cpu_only=cpu_only, executor=executor, partition=partition,
                            hosts_file=hosts_file)
    for s in summaries:
        err.print(views.summary_line(s))
    infra = any(s.infra_errors for s in summaries)
    title = f"valorch qualify {spec.name} against {baseline}"
    with factory() as session:
        runs = [queries.get_run(session, s.run_id) for s in summaries]
        batch = runs[0].batch if runs else "none"
        head = runs_side(session, f"{spec.name} {batch[:8]}", "qualify", runs)
        try:
            report = report_for(session, base, head, threshold, known_issues)
        except NoResults as exc:
            if targets:  # zero ingested results: a failure, never a success
                notify_outcome(targets, message.Outcome(title, 0, infra=infra, summary=exc.message))
            raise
        images = head_images(session, head.runs) if targets else {}
    out_dir = out_dir or Path("results") / f"qualify-{datetime.now():%Y%m%d-%H%M%S}"
    write_output(diff_md(report), out_dir / "report.md")
    write_output(diff_html(report), out_dir / "report.html")
    write_output(diff_junit(report), out_dir / "report.junit.xml")
    print_term(report)
    reached = notify_outcome(targets, notify_service.from_report(report, title, images, infra,
                                                          str(out_dir / "report.html"))) if targets else True
    if report.regressed:
        err.print(f"[bold red]qualification failed[/bold red]: regressed against {baseline}; see {out_dir}/report.md")
        raise typer.Exit(1)
    if any(s.infra_errors for s in summaries):
        err.print("[yellow]infrastructure errors: the affected checks are inconclusive; not qualified[/yellow]")
        raise typer.Exit(3)
    err.print(f"[bold green]qualified[/bold green] against {baseline}")
    if not reached:
        raise typer.Exit(3)
