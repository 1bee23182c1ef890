"""valorch baseline set NAME RUN|VERSION / valorch baseline list"""

from __future__ import annotations

import typer
from rich.table import Table

from ..errors import InputError
from ..store import bulk, queries
from .common import DbOption, JsonOption, err, out, print_json, sessions

app = typer.Typer(help="Named baselines: a run or a published matrix version to diff against.",
                  no_args_is_help=True)


@app.command("set")
def set_(name: str = typer.Argument(..., help="The baseline's name, e.g. v0.2 or release-2025-06."),
         target: str = typer.Argument(..., help="A run id (or unique prefix), or a published matrix version."),
         db: str = DbOption) -> None:
    """Name a run or a matrix version as a baseline (replaces an existing name)."""
    with sessions(db)() as session:
        mv = bulk.matrix_version(session, target)
        run = None if mv is not None else queries.get_run(session, target)
        if mv is None and run is None:
            raise InputError(f"'{target}' is neither a run nor a published matrix version",
                             "list runs with `valorch results list`")
        bulk.set_baseline(session, name, run_id=run.id if run else None, version=mv.version if mv else None)
        session.commit()
    err.print(f"baseline {name} → " + (f"run {run.id} ({run.image.alias})" if run else f"matrix version {mv.version}"))


@app.command("list")
def list_(db: str = DbOption, as_json: bool = JsonOption) -> None:
    """The named baselines."""
    with sessions(db)() as session:
        rows = [{"name": b.name, "run": b.run_id, "matrix_version": b.matrix_version,
                 "created": b.created.isoformat()} for b in bulk.baselines(session)]
    if as_json:
        print_json(rows)
        return
    table = Table("name", "run", "matrix version", "created")
    for r in rows:
        table.add_row(r["name"], r["run"] or "", r["matrix_version"] or "", r["created"])
    out.print(table)
