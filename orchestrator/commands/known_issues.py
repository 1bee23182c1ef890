"""valorch known-issues status: per waiver, the runs it excused and whether it can close (its
checks passed in every matching environment for --close-runs runs over --close-days days, the
options site build takes too)."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from .common import (
    CloseDaysOption,
    CloseRunsOption,
    DbOption,
    JsonOption,
    err,
    sessions,
    write_output,
)

app = typer.Typer(help="Known issues: what they excused, and which can close.")


@app.command("status")
def status(
    known_issues: Path = typer.Option(
        ..., "--known-issues", help="Known-issues YAML (jobs/known-issues.yaml)."
    ),
    runs: int = CloseRunsOption,
    days: float = CloseDaysOption,
    job: str = typer.Option(None, "--job", "-j", help="Only this job's runs."),
    db: str = DbOption,
    as_json: bool = JsonOption,
) -> None:
    """For each known issue: the runs it excused; "can close" when its checks passed in every
    matching environment for --close-runs runs over the last --close-days days."""
    from ..render.waivers import known_issues as text
    from ..services import known_issues_status as service
    from ..services.run import load_known_issues

    issues = load_known_issues(known_issues, lambda w: err.print(f"warning: {w}", markup=False))
    assert issues is not None  # a path was given
    for line in issues.unscoped:
        err.print(f"warning: {line}", markup=False)
    found = [s.as_dict() for s in service.status(sessions(db), issues, runs, days, job)]
    write_output(json.dumps(found, indent=2) if as_json else text(found), None)
