"""valorch results list | show | export | import | push | prune"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import TYPE_CHECKING, cast

import typer

from ..errors import InputError
from ..words import count
from . import flags
from .common import (
    CatalogOption,
    DbOption,
    JsonOption,
    SinceOption,
    deferred_sessions,
    err,
    fit,
    load_catalog,
    out,
    out_option,
    print_json,
    sessions,
    write_output,
)
from .tables import Table

if TYPE_CHECKING:
    from datetime import datetime

    from ..catalog.core import Catalog

app = typer.Typer(help="Stored runs and their results.", no_args_is_help=True)
KEPT = {
    "baseline": "a baseline refers to them",
    "published": "a published matrix version refers to them",
    "newest": "the newest run of their job, image and host (the live matrix)",
    "not on the server": "the shared store does not hold them (whole) yet",
}


@app.command("list")
def list_runs(
    image: str = typer.Option(None, help="Only runs of this image alias or reference."),
    job: str = typer.Option(
        None,
        "--job",
        help="Only runs of this job (its name, as the job column "
        "shows it; adhoc for runs without a job file).",
    ),
    state: str = typer.Option(
        None,
        "--state",
        help="Only runs in these states, comma-separated: running, done, failed, interrupted "
        "(a running run whose valorch died shows as abandoned).",
    ),
    since: str = typer.Option(
        None,
        "--since",
        callback=flags.date("--since"),
        help="Only runs started on or after this date (YYYY-MM-DD[THH:MM], UTC).",
    ),
    limit: int = typer.Option(
        50,
        callback=flags.integer("--limit", 1, 1_000_000),
        help="At most this many runs, newest first.",
    ),
    db: str = DbOption,
    as_json: bool = JsonOption,
) -> None:
    """Runs, newest first, with counts by status."""
    from ..services.run_list import listing, states_of

    when = cast("datetime | None", since)  # flags.date's callback parsed it
    rows = listing(db, limit, image, job=job, states=states_of(state), since=when)
    if as_json:
        print_json(
            [{**r, "started": r["started"].isoformat(), "counts": dict(r["counts"])} for r in rows]
        )
        return
    if not rows:
        asked = [f"--{k} {v}" for k, v in (("image", image), ("job", job), ("state", state)) if v]
        asked += [f"--since {when:%Y-%m-%d %H:%M}"] if when else []
        err.print(
            f"no runs match {' '.join(asked)} (valorch results list without filters shows "
            "every run)"
            if asked
            else "no runs in the results database (valorch run --job jobs/smoke.yaml makes one)",
            markup=False,
        )
        return
    table = Table("run", "started (UTC)", "image", "host", "job", "state", "pass", "fail", "other")
    for r in rows:
        c = r["counts"]
        other = sum(v for k, v in c.items() if k not in ("pass", "fail"))
        table.add_row(
            fit(r["run"], 8),
            r["started"].strftime("%Y-%m-%d %H:%M:%S"),
            r["image"],
            r["host"],
            r["job"],
            r["state"],
            str(c.get("pass", 0)),
            str(c.get("fail", 0)),
            str(other),
        )
    out.print(table)


@app.command("show")
def show_run(
    run_id: str = typer.Argument(..., help="A run id (or a unique prefix of one)."),
    status: str = typer.Option(
        None,
        "--status",
        callback=flags.statuses("--status"),
        help="Only the attempts in these statuses, e.g. fail,crash.",
    ),
    db: str = DbOption,
    as_json: bool = JsonOption,
    catalog: Path = CatalogOption,
) -> None:
    """One run: provenance, every attempt of every check, and why each red check is red (triage)."""
    from ..services import results as service
    from ..services import triage

    factory = deferred_sessions(db)
    data = service.show(factory, run_id, status)
    # every red check says why: as stored when the run ended, or against the pins of an explicit --catalog
    why = triage.stored_or_now(
        factory, data["run"], lambda: _pins(catalog), now=catalog is not None
    )
    if as_json:
        print_json({**data, "triage": triage.as_json(why)})
        return
    out.print(f"[bold]run {data['run']}[/bold] {data['state']}")
    if data["state"] == "abandoned":
        out.print(
            "  the valorch that ran it is gone; finish it with "
            f"`valorch run --resume {data['batch']}`",
            markup=False,
        )
    out.print(
        f"  image   {data['image']['alias']}  {data['image']['reference']}  {data['image']['digest'] or ''}"
    )
    if data["image"].get("platform_digest"):
        out.print(
            f"          index {data['image']['index_digest']}  platform (linux/amd64) "
            f"{data['image']['platform_digest']}"
        )
    out.print(
        f"  host    {', '.join(data.get('nodes') or [data['host']])} ({data['executor']})  valorch {data['valorch_version']}  "
        f"spec {data['spec_hash']}"
    )
    out.print(f"  started {data['started']}  ended {data['ended']}")
    if data.get("provenance"):
        out.print(f"  {data['provenance']}", markup=False)  # a path, not markup
    table = Table("check", "attempt", "status", "seconds", "message")
    for r in data["results"]:
        table.add_row(
            r["check"],
            str(r["attempt"]),
            r["status"],
            f"{r['duration_s']:.3f}",
            fit(r["message"], 100),
        )
    if data["results"] or not status:
        out.print(table)
    else:  # a filter that matched nothing says so, not an empty table
        out.print(f"  no attempt of this run ended in {', '.join(status)}", markup=False)
    for check, t in sorted(why.items()):
        out.print(f"  {triage.line(check, t)}", markup=False)
        for d in t.details:
            out.print(f"      {d}", markup=False)


def _pins(catalog: Path | None) -> Catalog | None:
    """The catalog whose pins triage compares digests with: a broken default catalog only
    costs the image-drift class (the run is still shown); a broken --catalog is exit 2."""
    try:
        return load_catalog(catalog)
    except InputError:
        if catalog is not None:
            raise
        return None


@app.command("export")
def export(
    run_ids: list[str] = typer.Argument(..., help="Run ids (or unique prefixes) to export."),
    out_path: Path = out_option("Write the JSON here instead of stdout."),
    db: str = DbOption,
) -> None:
    """Runs with their images, hosts, checks, tasks, results and inventory as one JSON document."""
    from ..services import results as service

    doc = service.export(sessions(db), run_ids)
    write_output(json.dumps(doc, indent=1, sort_keys=True), out_path)


@app.command("import")
def import_(
    path: Path = typer.Argument(..., help="A file written by valorch results export."),
    dry_run: bool = typer.Option(
        False, "--dry-run", help="Validate and count what would be added; write nothing."
    ),
    db: str = DbOption,
    as_json: bool = JsonOption,
) -> None:
    """Add the runs of an export to this database; runs already here are left alone. The
    file is validated as a whole first (every field, as strictly as a probe's output)."""
    from ..services import results as service

    doc = service.read_export(path)
    counts = service.import_(sessions(db), doc, str(path), dry_run=dry_run)
    if as_json:
        print_json(counts)
        return
    total = len(doc.get("runs", []))
    verb = "would import" if dry_run else "imported"
    err.print(
        f"{verb} {path}: {counts['runs']} new of {count(total, 'run')}, "
        f"{count(counts['results'], 'new result')}, "
        f"{count(counts['inventory'], 'new inventory row')}"
    )


@app.command("push")
def push(
    to: str = typer.Option(
        ...,
        "--to",
        envvar="VALORCH_PUSH_TO",
        help="The shared store's URL, e.g. postgresql://valorch@db.example/valorch.",
    ),
    since: str = SinceOption,
    origin: str = typer.Option(
        None,
        "--origin",
        envvar="VALORCH_ORIGIN",
        help="Where the runs come from [default: HOSTNAME:LOCAL_DB_PATH].",
    ),
    db: str = DbOption,
    as_json: bool = JsonOption,
) -> None:
    """Send this machine's finished runs to the shared store: whole runs, each in one
    transaction; runs already there are skipped, so it is safe to repeat and resumes
    after an interruption. The local store is left as it is."""
    from ..services import push as service

    report = service.push(db, to, cast("datetime | None", since), origin)  # parsed by flags.date
    if as_json:
        print_json(dataclasses.asdict(report))
    else:
        rate = (
            f"{report.pushed / report.seconds:.1f} runs/s, {report.results / report.seconds:,.0f} results/s"
            if report.pushed and report.seconds > 0
            else ""
        )
        err.print(
            f"pushed {count(report.pushed, 'run')} ({count(report.results, 'result')}) to "
            f"{report.target}{'; ' + rate if rate else ''}; {report.already} of "
            f"{count(report.finished, 'finished run')} {'was' if report.already == 1 else 'were'} "
            "there already"
            + (
                f"; {count(report.unfinished, 'unfinished run')} left for later"
                if report.unfinished
                else ""
            )
        )
    if report.interrupted:
        err.print(
            f"[yellow]interrupted[/yellow]: {report.finished - report.already - report.pushed} runs not pushed "
            "(no half-run on the server); run the same push again",
        )
        raise typer.Exit(130)


@app.command("prune")
def prune(
    keep_days: int = typer.Option(
        ...,
        "--keep-days",
        callback=flags.integer("--keep-days", 0, 36_500),
        help="Keep everything of the last N days.",
    ),
    keep_published: bool = typer.Option(
        True,
        "--keep-published/--no-keep-published",
        help="Keep the runs of published matrix versions whole (default); "
        "without: only their raw samples may go, never the runs.",
    ),
    pushed_to: str = typer.Option(
        None,
        "--pushed-to",
        help="A runner's local store: delete old runs (any job) only once the "
        "shared store at this URL holds them.",
    ),
    dry_run: bool = typer.Option(False, "--dry-run", help="Print what would go; change nothing."),
    db: str = DbOption,
    as_json: bool = JsonOption,
) -> None:
    """Drop raw timing samples and ad-hoc runs older than N days. Never touches runs a
    baseline names, the newest run of each job, image and host, or (with
    --keep-published) runs a published matrix version refers to."""
    from ..services import retention as service

    report = service.prune(db, keep_days, keep_published, dry_run, pushed_to)
    p = report.plan
    if as_json:
        print_json(
            {
                "dry_run": report.dry_run,
                "cutoff": p.cutoff.isoformat(),
                "delete_runs": [dataclasses.asdict(r) for r in p.delete],
                "delete_results": sum(r.results for r in p.delete),
                "strip_runs": len(p.strip),
                "strip_results": p.strip_results,
                "strip_bytes": p.strip_bytes,
                "kept": p.kept,
                "done": report.done,
            }
        )
        return
    would = report.dry_run
    out.print(
        f"runs started before {p.cutoff:%Y-%m-%d %H:%M} UTC"
        + (" (dry run: nothing changed)" if would else "")
    )
    out.print(
        f"  {'would delete' if would else 'deleted'} {len(p.delete)} runs whole "
        f"({sum(r.results for r in p.delete)} results)"
    )
    for r in p.delete[:20]:
        out.print(f"    {r.id}  {r.started:%Y-%m-%d}  {r.job}  {r.image}  {r.results} results")
    if len(p.delete) > 20:
        out.print(f"    ... and {len(p.delete) - 20} more")
    out.print(
        f"  {'would drop' if would else 'dropped'} the raw samples of {p.strip_results} results in "
        f"{len(p.strip)} runs ({p.strip_bytes / 1e6:.1f} MB; their median, min and max stay in the metrics)"
    )
    for reason, n in sorted(p.kept.items()):
        out.print(f"  kept {n} runs: {KEPT[reason]}")
