"""valorch accept add | revoke | list: a regression shipped knowingly, in writing, until a day.

The readiness cell it covers stays red; the acceptance is shown beside it and keeps it from
gating through the last day --until names (UTC, inclusive); an expired or revoked acceptance
gates again. CHECK and --env are checked against the probe's manifest and the store. Exit 2
on bad input.
"""

from __future__ import annotations

import json
from datetime import date
from typing import cast

import typer

from . import flags
from .common import DbOption, JsonOption, say, sessions, write_output

app = typer.Typer(help="Accept a regression in writing, until a day; revoke one; list them.")


def _until(value: str | None) -> date | None:
    from ..regression.acceptance import until_day

    if value is None:
        return None
    try:
        return until_day(value)
    except ValueError as e:
        raise typer.BadParameter(str(e), param_hint="'--until'") from None


@app.command("add")
def add(
    check: str = typer.Argument(
        ..., help="The check id (or glob), as the probe's manifest or a stored run names it."
    ),
    env: str = typer.Option(
        ...,
        "--env",
        help="The environment: an image alias or ALIAS@ARCH glob (host@cpu, 'rocm_*@amd:gfx942') "
        "that matches a stored run.",
    ),
    reason: str = typer.Option(..., "--reason", help="Why it ships anyway (a bug, a fix date)."),
    by: str = typer.Option(..., "--by", help="Who accepts it."),
    until: str = typer.Option(
        ...,
        "--until",
        callback=_until,
        help="The last day it covers, YYYY-MM-DD (UTC, the whole day inclusive).",
    ),
    expected_rate: float = typer.Option(
        None,
        "--expected-rate",
        callback=flags.number("--expected-rate", 0, 1, lo_open=True),
        help="The pass rate now expected, in (0, 1] (e.g. 0.9).",
    ),
    allow_unseen: bool = typer.Option(
        False,
        "--allow-unseen",
        help="Accept an --env, or a check a job declares (command.*, pytest.*), that no stored "
        "run has yet (ahead of its first run); the syntax is still checked.",
    ),
    db: str = DbOption,
    as_json: bool = JsonOption,
) -> None:
    """Record that CHECK's regression in ENV ships knowingly, through the day --until names."""
    from ..render.waivers import as_dict
    from ..services import accept as service

    day = cast("date", until)  # parsed by _until
    got = service.add(sessions(db), check, env, reason, by, day, expected_rate, allow_unseen)
    if as_json:
        write_output(json.dumps(as_dict(got), indent=2), None)
        return
    say(
        f"accepted {got.check} in {got.env} through {got.until:%Y-%m-%d} (UTC, inclusive) "
        f"by {got.by} (#{got.id})"
    )


@app.command("revoke")
def revoke(
    acceptance: int = typer.Argument(
        ..., min=1, max=2**31 - 1, help="The acceptance's id (valorch accept list)."
    ),
    by: str = typer.Option(..., "--by", help="Who revokes it."),
    reason: str = typer.Option(..., "--reason", help="Why (fixed, accepted by mistake, ...)."),
    db: str = DbOption,
    as_json: bool = JsonOption,
) -> None:
    """Withdraw an acceptance: kept in the history as revoked (who, when, why), it excuses
    nothing from now on."""
    from ..render.waivers import as_dict
    from ..services import accept as service

    got = service.revoke(sessions(db), acceptance, by, reason)
    if as_json:
        write_output(json.dumps(as_dict(got), indent=2), None)
        return
    assert got.revoked is not None
    say(
        f"revoked #{got.id} ({got.check} in {got.env}) by {got.revoked.by} on "
        f"{got.revoked.at:%Y-%m-%d %H:%M} UTC: {got.revoked.reason}"
    )


@app.command("list")
def list_(db: str = DbOption, as_json: bool = JsonOption) -> None:
    """Every acceptance: live, expired and revoked."""
    from ..render.waivers import acceptances
    from ..services import accept as service

    rows = service.listing(db)
    write_output(json.dumps(rows, indent=2) if as_json else acceptances(rows), None)
