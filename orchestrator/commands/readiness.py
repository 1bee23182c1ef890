"""valorch readiness --job JOB --basis BASIS: every check × environment's pass rate over a
window of runs against a basis, red where it is significantly lower (Fisher's exact test).

Exit 0 ready (no red cell, or every red cell accepted), 1 a red cell nobody accepted, 2 bad
input (job, basis, window, alpha).
"""

from __future__ import annotations

from pathlib import Path

import typer

from . import flags
from .common import DbOption, JsonOption, end_with, sessions, write_output

FORMATS = ("term", "md", "json")


def readiness(
    job: str = typer.Option(..., "--job", "-j", help="The job's name (or its YAML file)."),
    basis: str = typer.Option(
        ...,
        "--basis",
        "-b",
        help="What to compare with: a matrix version, baseline, run or batch, or "
        "window:DURATION (the job's runs in the DURATION before the window).",
    ),
    window: str = typer.Option(
        "7d",
        "--window",
        "-w",
        help="The candidate runs: those of the last DURATION (90m, 36h, 7d, 2w).",
    ),
    alpha: float = typer.Option(
        0.05,
        "--alpha",
        callback=flags.number("--alpha", 0, 1, lo_open=True),
        help="Significance level in (0, 1), over all cells (Benjamini–Hochberg).",
    ),
    fmt: str = typer.Option("term", "--format", "-f", help="term, md or json."),
    out_path: Path = typer.Option(
        None, "--out", "-o", callback=flags.OUT_FILE, help="Write here instead of stdout."
    ),
    db: str = DbOption,
    as_json: bool = JsonOption,
) -> None:
    """Pass rates of JOB's checks over --window against --basis; exit 1 on an unaccepted red cell."""
    from ..errors import InputError
    from ..render.readiness import RENDERERS
    from ..services import readiness as service

    if as_json:
        fmt = "json"
    if fmt not in FORMATS:
        raise InputError(f"unknown --format '{fmt}'", f"use one of {', '.join(FORMATS)}")
    if alpha >= 1:
        raise InputError(f"--alpha {alpha:g} is outside (0, 1)", "use e.g. --alpha 0.05")
    factory = sessions(db)
    report = service.for_report(factory, job, basis, window, alpha)
    write_output(RENDERERS[fmt](report), out_path)
    end_with(service.outcome(report))
