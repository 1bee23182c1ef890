"""valorch results list | show | export | import"""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.table import Table

from ..errors import InputError
from .common import DbOption, JsonOption, err, out, print_json, sessions, write_output

app = typer.Typer(help="Stored runs and their results.", no_args_is_help=True)


@app.command("list")
def list_runs(image: str = typer.Option(None, help="Only runs of this image alias or reference."),
              limit: int = typer.Option(50, help="At most this many runs, newest first."),
              db: str = DbOption, as_json: bool = JsonOption) -> None:
    """Runs, newest first, with counts by status."""
    from ..services import results as service

    rows = service.listing(sessions(db), limit, image)
    if as_json:
        print_json([{**r, "started": r["started"].isoformat(), "counts": dict(r["counts"])} for r in rows])
        return
    table = Table("run", "started (UTC)", "image", "host", "job", "state", "pass", "fail", "other")
    for r in rows:
        c = r["counts"]
        other = sum(v for k, v in c.items() if k not in ("pass", "fail"))
        table.add_row(r["run"][:8], r["started"].strftime("%Y-%m-%d %H:%M:%S"), r["image"], r["host"], r["job"],
                      r["state"], str(c.get("pass", 0)), str(c.get("fail", 0)), str(other))
    out.print(table)


@app.command("show")
def show_run(run_id: str = typer.Argument(..., help="A run id (or a unique prefix of one)."),
             db: str = DbOption, as_json: bool = JsonOption) -> None:
    """One run: provenance and every attempt of every check."""
    from ..services import results as service

    data = service.show(sessions(db), run_id)
    if as_json:
        print_json(data)
        return
    out.print(f"[bold]run {data['run']}[/bold] {data['state']}")
    out.print(f"  image   {data['image']['alias']}  {data['image']['reference']}  {data['image']['digest'] or ''}")
    if data["image"].get("platform_digest"):
        out.print(f"          index {data['image']['index_digest']}  platform (linux/amd64) "
                  f"{data['image']['platform_digest']}")
    out.print(f"  host    {data['host']} ({data['executor']})  valorch {data['valorch_version']}  "
              f"spec {data['spec_hash']}")
    out.print(f"  started {data['started']}  ended {data['ended']}")
    table = Table("check", "attempt", "status", "seconds", "message")
    for r in data["results"]:
        table.add_row(r["check"], str(r["attempt"]), r["status"], f"{r['duration_s']:.3f}", r["message"][:100])
    out.print(table)


@app.command("export")
def export(run_ids: list[str] = typer.Argument(..., help="Run ids (or unique prefixes) to export."),
           out_path: Path = typer.Option(None, "--out", "-o", help="Write the JSON here instead of stdout."),
           db: str = DbOption) -> None:
    """Runs with their images, hosts, checks, tasks, results and inventory as one JSON document."""
    from ..services import results as service

    doc = service.export(sessions(db), run_ids)
    write_output(json.dumps(doc, indent=1, sort_keys=True), out_path)


@app.command("import")
def import_(path: Path = typer.Argument(..., help="A file written by valorch results export."),
            db: str = DbOption, as_json: bool = JsonOption) -> None:
    """Add the runs of an export to this database; runs already here are left alone."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror}", "pass a file written by valorch results export") from None
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}:{exc.lineno}: not JSON ({exc.msg})",
                         "pass a file written by valorch results export") from None
    from ..services import results as service

    counts = service.import_(sessions(db), doc, str(path))
    if as_json:
        print_json(counts)
        return
    total = len(doc.get("runs", []))
    err.print(f"imported {path}: {counts['runs']} new of {total} runs, {counts['results']} new results, "
              f"{counts['inventory']} new inventory rows")
