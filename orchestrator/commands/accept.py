"""valorch accept add | list: a regression shipped knowingly, in writing, until a date.

The readiness cell it covers stays red; the acceptance is shown beside it and keeps it from
gating until --until (an expired acceptance gates again). Exit 2 on bad input.
"""

from __future__ import annotations

from datetime import datetime
from typing import cast

import typer

from . import flags
from .common import DbOption, JsonOption, say, sessions, write_output

app = typer.Typer(help="Accept a regression in writing, until a date; list acceptances.")


@app.command("add")
def add(
    check: str = typer.Argument(..., help="The check id (or glob) accepted."),
    env: str = typer.Option(
        ..., "--env", help="The environment: an image alias or ALIAS@ARCH glob (host@cpu)."
    ),
    reason: str = typer.Option(..., "--reason", help="Why it ships anyway (a bug, a fix date)."),
    by: str = typer.Option(..., "--by", help="Who accepts it."),
    until: str = typer.Option(
        ..., "--until", callback=flags.date("--until"), help="When it expires (YYYY-MM-DD)."
    ),
    expected_rate: float = typer.Option(
        None,
        "--expected-rate",
        callback=flags.number("--expected-rate", 0, 1, lo_open=True),
        help="The pass rate now expected, in (0, 1] (e.g. 0.9).",
    ),
    db: str = DbOption,
    as_json: bool = JsonOption,
) -> None:
    """Record that CHECK's regression in ENV ships knowingly, until --until."""
    import json

    from ..services import accept as service

    when = cast("datetime", until)  # parsed by flags.date
    got = service.add(sessions(db), check, env, reason, by, when, expected_rate)
    if as_json:
        write_output(json.dumps(got.as_dict(), indent=2), None)
        return
    say(
        f"accepted {got.check} in {got.env} until {got.until:%Y-%m-%d %H:%M} by {got.by} (#{got.id})"
    )


@app.command("list")
def list_(
    db: str = DbOption,
    as_json: bool = JsonOption,
) -> None:
    """Every acceptance, live and expired."""
    import json

    from ..services import accept as service

    rows = service.listing(sessions(db))
    if as_json:
        write_output(json.dumps(rows, indent=2), None)
        return
    if not rows:
        write_output("no acceptances: valorch accept add CHECK --env ENV ... records one", None)
        return
    lines = [
        f"#{r['id']}  {r['check']}  {r['env']}  until {r['until']}"
        f"{'' if r['live'] else ' (expired)'}  by {r['by']}"
        + (f"  expected {r['expected_rate']:.0%}" if r["expected_rate"] is not None else "")
        + f": {r['reason']}"
        for r in rows
    ]
    write_output("\n".join(lines), None)
