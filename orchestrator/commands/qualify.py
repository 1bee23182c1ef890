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
from typing import TYPE_CHECKING, Any

import typer

from .. import satellites
from ..applies import KNOWN_ISSUES, READINESS, Applies
from . import flags
from .common import (
    CatalogOption,
    DbOption,
    NotifyOption,
    ThresholdOption,
    close_options,
    end_with,
    err,
    load_catalog,
    local_images,
    say,
    sessions,
    window_option,
    write_output,
)
from .placing import where_options

if TYPE_CHECKING:
    from ..services.placing import Where

_JOB = typer.Option(None, "--job", "-j", help="The release job spec (jobs/release.yaml).")
_IMAGE = typer.Option(
    None,
    "--image",
    "-i",
    help="A candidate image not in the catalog (a tag or "
    "digest): runs the job's suites (or smoke) on it alone, no catalog edit.",
)
_BASELINE = typer.Option(
    ..., "--baseline", "-b", help="Baseline name, matrix version or run id to compare with."
)
_KNOWN_ISSUES = typer.Option(None, "--known-issues", help="Known-issues YAML (expected failures).")
_OUT_DIR = typer.Option(
    None,
    "--out-dir",
    callback=flags.OUT_DIR,
    help="Reports here [default: results/qualify-<time>/].",
)
_ALLOW_COVERAGE_LOSS = typer.Option(
    False,
    "--allow-coverage-loss",
    help="Qualify although baseline checks are missing from the "
    "head or went pass → unsupported/partial/skip.",
)
_ALLOW_KNOWN_FAILURES = typer.Option(
    False,
    "--allow-known-failures",
    help="Qualify although checks that failed in the baseline "
    "still fail (listed first as 'still failing').",
)
_READINESS = typer.Option(
    None,
    "--readiness",
    help="Also gate on readiness: the job's pass rates over --window against this "
    "basis (a matrix version, baseline, or window:DURATION); docs/readiness.md.",
)
_READINESS_WINDOW = window_option(
    Applies(needs=READINESS, why="it says which runs --readiness counts")
)
_CLOSE_RUNS, _CLOSE_DAYS = close_options(
    Applies(needs=KNOWN_ISSUES, why="they say when a known issue of --known-issues can close")
)
_ALLOW_EMPTY = typer.Option(
    False,
    "--allow-empty",
    help="Qualify although the candidate proved nothing (no results, no check selected, "
    "every check skipped, unsupported or not applicable) [default: not qualified].",
)


@where_options
def qualify(
    job: Path = _JOB,
    image: str = _IMAGE,
    baseline: str = _BASELINE,
    known_issues: Path = _KNOWN_ISSUES,
    out_dir: Path = _OUT_DIR,
    threshold: float = ThresholdOption,
    allow_coverage_loss: bool = _ALLOW_COVERAGE_LOSS,
    allow_known_failures: bool = _ALLOW_KNOWN_FAILURES,
    readiness: str = _READINESS,
    readiness_window: str = _READINESS_WINDOW,
    close_runs: int = _CLOSE_RUNS,
    close_days: float = _CLOSE_DAYS,
    allow_empty: bool = _ALLOW_EMPTY,
    notify: list[str] = NotifyOption,
    db: str = DbOption,
    catalog: Path = CatalogOption,
    *,
    where: Where,
) -> None:
    """Run the job, diff the new runs against the baseline, write report.md/.html/.junit.xml; gate."""
    from ..render.diff import diff_html, diff_junit, diff_md, qualify_json
    from ..services import qualify as service
    from ..services import triage
    from ..services.candidate import candidate_job
    from ..services.diff import NoResultsError
    from ..services.run import load_known_issues
    from .progress import RunViews
    from .signals import interruptible
    from .terminal import print_term

    # the notify satellite, loaded where --notify is given: a bad --notify is exit 2 before an hour of runs
    notify_service: Any = satellites.load("notify", "service", "--notify") if notify else None
    targets = notify_service.parse_targets(notify) if notify_service else ()
    if readiness:  # a bad window is exit 2 before an hour of runs
        from ..services.readiness import duration

        duration(readiness_window, "--window")
    cat = load_catalog(catalog)
    spec = candidate_job(cat, job, image)
    title = f"valorch qualify {spec.name} against {baseline}"
    allow = (allow_coverage_loss, allow_known_failures)
    opts = service.QualifyOptions(
        baseline, known_issues, threshold, *allow, where, readiness, readiness_window, allow_empty
    )
    factory = sessions(db)
    try:
        with interruptible():
            done = service.qualify(spec, cat, factory, opts, RunViews(err))
    except NoResultsError as exc:
        if targets:  # zero ingested results: a failure, never a success
            notify_service.post_empty(targets, title, exc.message, say)
        raise
    for line in done.lines:
        err.print(line)
    out_dir = out_dir or Path("results") / f"qualify-{datetime.now():%Y%m%d-%H%M%S}"
    # the known issues whose checks no longer fail (known-issues status says they can close,
    # by --close-runs and --close-days), each said on stderr: the report names them
    closable: list[str] = []
    if known_issues is not None and (issues := load_known_issues(known_issues)):
        from ..services.known_issues_status import status

        for s in status(factory, issues, close_runs, close_days, spec.name):
            if s.can_close:
                err.print(f"known issue {s.issue.check} can close: {s.why}", markup=False)
                closable.append(s.issue.check)
    # report.md, .html, .junit.xml, readiness.md and qualify.json: each a rendering of the one
    # verdict, with the triage of each red check (every sink, the notification too, says why)
    report, verdict = done.report, done.verdict
    why = triage.for_runs(factory, report.head.runs, report.base)
    write_output(diff_md(report, verdict, why), out_dir / "report.md")
    write_output(diff_html(report, verdict, why), out_dir / "report.html")
    write_output(diff_junit(report, verdict, why), out_dir / "report.junit.xml")
    if done.readiness is not None:
        from ..render.readiness import render_md

        write_output(render_md(done.readiness.report), out_dir / "readiness.md")
    write_output(
        qualify_json(
            report,
            verdict,
            why,
            job=spec.name,
            baseline=done.baseline,
            closable=closable,
            readiness=done.readiness.summary if done.readiness is not None else None,
            finished=f"{datetime.now(timezone.utc):%Y-%m-%dT%H:%M:%SZ}",
        ),
        out_dir / "qualify.json",
    )
    print_term(report, verdict, why)
    reached = True  # each --notify target got the report
    if targets:
        html = str(out_dir / "report.html")
        posting = notify_service.Posting(
            report, title, verdict, why, infra=done.infra_errors, report_path=html
        )
        posted = notify_service.post_report(factory, targets, posting, say, local=local_images())
        reached = bool(posted)
    end_with(done.outcome(out_dir, notified=reached))
