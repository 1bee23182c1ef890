"""valorch db upgrade | status | check"""

from __future__ import annotations

import typer

from .common import DbOption, JsonOption, err, print_json

app = typer.Typer(help="The results database's schema.", no_args_is_help=True)


@app.command("upgrade")
def upgrade(db: str = DbOption, as_json: bool = JsonOption) -> None:
    """Create or migrate the schema to this valorch's version.

    A local SQLite file is upgraded when any command opens it; a PostgreSQL server never is: run
    this once, from one machine, before runners with a newer valorch write to it (runners at the
    older version then stop with a message until they are upgraded too)."""
    from ..services import db as service

    change = service.upgrade(db)
    if as_json:
        print_json(change.as_json())
    elif not change.changed:
        err.print(f"schema {change.after}: already at this valorch's version")
    else:
        err.print(f"schema {change.before or 'none'} → {change.after}")


@app.command("status")
def status(db: str = DbOption, as_json: bool = JsonOption) -> None:
    """Which schema the database is at, and which this valorch needs."""
    from ..services import db as service

    info = service.status(db)
    if as_json:
        print_json(info.as_json())
        return
    state = "up to date" if info.up_to_date else "run `valorch db upgrade`"
    err.print(
        f"{info.database} ({info.dialect}): schema {info.revision or 'none'}, "
        f"this valorch needs {info.head}: {state}"
    )


@app.command("check")
def check(db: str = DbOption, as_json: bool = JsonOption) -> None:
    """Check the store: the database's integrity check, the schema against this valorch's
    models, and every stored date, JSON and sample value; lists every problem found.
    Exit 0 when there is none, 3 when the store is damaged. Changes nothing."""
    from ..services import db as service

    report = service.check(db)
    if as_json:
        print_json(report.as_json())
    else:
        for p in report.problems:
            err.print(f"  {p}", markup=False)
    damaged = report.error()
    if damaged is not None:
        raise damaged
    if not as_json:
        err.print(f"{report.database}: no problem found (integrity, schema, stored values)")
