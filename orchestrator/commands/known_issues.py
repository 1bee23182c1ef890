"""valorch known-issues status: per known issue, the runs it excused and whether it can close
(its checks passed in every matching environment for --runs runs over --days days)."""

from __future__ import annotations

from pathlib import Path

import typer

from . import flags
from .common import DbOption, JsonOption, err, sessions, write_output

app = typer.Typer(help="Known issues: what they excused, and which can close.")


@app.command("status")
def status(
    known_issues: Path = typer.Option(
        ..., "--known-issues", help="Known-issues YAML (jobs/known-issues.yaml)."
    ),
    runs: int = typer.Option(
        3, "--runs", min=1, max=10_000, help="Passing runs each environment needs to close."
    ),
    days: float = typer.Option(
        14,
        "--days",
        callback=flags.number("--days", 0, 3660, lo_open=True),
        help="Over the last this many days (default 14: two weeks).",
    ),
    job: str = typer.Option(None, "--job", "-j", help="Only this job's runs."),
    db: str = DbOption,
    as_json: bool = JsonOption,
) -> None:
    """For each known issue: the runs it excused; "can close" when its checks passed in every
    matching environment for --runs runs over the last --days days."""
    import json

    from ..services import known_issues_status as service
    from ..services.run import load_known_issues

    issues = load_known_issues(known_issues, lambda w: err.print(f"warning: {w}", markup=False))
    assert issues is not None  # a path was given
    for line in issues.unscoped:
        err.print(f"warning: {line}", markup=False)
    found = service.status(sessions(db), issues, runs, days, job)
    if as_json:
        write_output(json.dumps([s.as_dict() for s in found], indent=2), None)
        return
    from ..render.waivers import known_issues as text

    write_output(text([s.as_dict() for s in found]), None)
