"""valorch baseline set NAME RUN|VERSION / valorch baseline list"""

from __future__ import annotations

import typer

from . import flags
from .common import DbOption, JsonOption, deferred_sessions, err, out, print_json, sessions
from .tables import Table

app = typer.Typer(
    help="Named baselines: a run or a published matrix version to diff against.",
    no_args_is_help=True,
)


@app.command("set")
def set_(
    name: str = typer.Argument(
        ...,
        callback=flags.version_name("NAME"),
        help="The baseline's name, e.g. v0.2 or release-2025-06 (1 to 64 characters "
        "of letters, digits, '.', '_' and '-').",
    ),
    target: str = typer.Argument(
        ..., help="A run id (or unique prefix), or a published matrix version."
    ),
    db: str = DbOption,
) -> None:
    """Name a run or a matrix version as a baseline (replaces an existing name)."""
    from ..services.baseline import set_baseline

    err.print(f"baseline {name} → " + set_baseline(sessions(db), name, target))


@app.command("list")
def list_(db: str = DbOption, as_json: bool = JsonOption) -> None:
    """The named baselines."""
    from ..services.baseline import baselines

    rows = baselines(deferred_sessions(db))
    if as_json:
        print_json(rows)
        return
    table = Table("name", "run", "matrix version", "created")
    for r in rows:
        table.add_row(r["name"], r["run"] or "", r["matrix_version"] or "", r["created"])
    out.print(table)
