"""valorch matrix render"""

from __future__ import annotations

from pathlib import Path

import typer

from ..errors import InputError
from ..matrix import build
from ..store import queries
from . import views
from .common import DbOption, print_json, sessions, write_output

app = typer.Typer(help="The compatibility matrix from stored results.", no_args_is_help=True)


@app.command("render")
def render(fmt: str = typer.Option("md", "--format", "-f", help="md or json."),
           image: list[str] = typer.Option(None, "--image", help="Only these image aliases (repeatable)."),
           out_path: Path = typer.Option(None, "--out", "-o", help="Write here instead of stdout."),
           db: str = DbOption) -> None:
    """Checks × images, from the latest run of each image."""
    if fmt not in ("md", "json"):
        raise InputError(f"unknown --format '{fmt}'", "use md or json")
    with sessions(db)() as session:
        runs = queries.latest_runs(session, image or ())
        if not runs:
            raise InputError("no finished runs in the results database" + (f" for {', '.join(image)}" if image else ""),
                             "run something first: valorch run --image host")
        results = {r.id: queries.run_results(session, r.id) for r in runs}
    if fmt == "md":
        write_output(views.matrix_markdown(runs, results), out_path)
        return
    m = build(views.observations(runs, results))
    data = {"columns": list(m.columns),
            "rows": [{"check": r.key, "feature": r.feature, "kind": r.kind, "library": r.library,
                      "cells": {c: {"verdict": m.cell(r.key, c).verdict, "statuses": list(m.cell(r.key, c).statuses),
                                    "runs": list(m.cell(r.key, c).runs)} for c in m.columns}}
                     for r in m.rows]}
    if out_path:
        import json

        write_output(json.dumps(data, indent=2), out_path)
    else:
        print_json(data)
