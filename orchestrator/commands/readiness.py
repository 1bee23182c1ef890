"""valorch readiness --job JOB --basis BASIS: every check × environment's pass rate over a
window of runs against a basis, red where it is significantly lower (Fisher's exact test).

Exit 0 ready, 1 not ready (a regression or missing sample nobody accepted, or nothing to
judge without --allow-empty), 2 bad input (job, basis, window, a threshold out of range).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from ..errors import InputError
from . import flags
from .common import (
    DbOption,
    JsonOption,
    OutOption,
    WindowOption,
    end_with,
    err,
    sessions,
    write_output,
)

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
    window: str = WindowOption,
    confidence: float = typer.Option(
        None,
        "--confidence",
        callback=flags.number("--confidence", 0, 100, lo_open=True),
        help="Fisher's exact test at this confidence, percent in (0, 100) [default: 95, Sippy's].",
    ),
    alpha: float = typer.Option(
        None,
        "--alpha",
        callback=flags.number("--alpha", 0, 1, lo_open=True),
        help="The significance level in (0, 1) instead of --confidence (0.05 = 95 %).",
    ),
    pity: float = typer.Option(
        5.0,
        "--pity",
        callback=flags.number("--pity", 0, 100),
        help="A drop of at most this many pass-rate points is never a regression (Sippy: 5).",
    ),
    min_fail: int = typer.Option(
        3,
        "--min-fail",
        min=0,
        max=1_000_000,
        help="The fewest candidate failures a regression needs; 0: no minimum (Sippy: 3).",
    ),
    extreme: float = typer.Option(
        15.0,
        "--extreme",
        callback=flags.number("--extreme", 0, 100),
        help="A regression dropping more than this many points is extreme (Sippy: 15).",
    ),
    correction: str = typer.Option(
        "none",
        "--correction",
        help="none (Sippy), or bh: Benjamini–Hochberg over the cells tested; it never hides "
        "an extreme regression.",
    ),
    allow_empty: bool = typer.Option(
        False,
        "--allow-empty",
        help="Say ready when there is nothing to judge (no candidate runs, an empty basis, no "
        "cell tested on both sides): accepted knowingly.",
    ),
    known_issues: Path = typer.Option(
        None,
        "--known-issues",
        help="Known-issues YAML: its live entries excuse the red cells they cover, as "
        "accept add's waivers do.",
    ),
    fmt: str = flags.option(
        "term", "--format", "-f", applies=flags.FORMAT, help="term, md or json."
    ),
    out_path: Path = OutOption,
    db: str = DbOption,
    as_json: bool = JsonOption,
) -> None:
    """Pass rates of JOB's checks over --window against --basis, judged by Sippy's rules; exit 1
    when not ready (an unaccepted regression or missing sample, or nothing to judge)."""
    from ..render.readiness import RENDERERS
    from ..services import readiness as service
    from ..services.run import load_known_issues

    if as_json:
        fmt = "json"
    if fmt not in FORMATS:
        raise InputError(f"unknown --format '{fmt}'", f"use one of {', '.join(FORMATS)}")
    opts = _options(alpha, confidence, correction, pity, min_fail, extreme, allow_empty)
    issues = load_known_issues(known_issues, lambda w: err.print(f"warning: {w}", markup=False))
    report = service.decide(sessions(db), job, basis, window, opts, issues)
    write_output(RENDERERS[fmt](report), out_path)
    end_with(service.outcome(report))


def _options(
    alpha: float | None,
    confidence: float | None,
    correction: str,
    pity: float,
    min_fail: int,
    extreme: float,
    allow_empty: bool,
) -> Any:
    """The judging options, each checked against the others (exit 2 naming the flag)."""
    from ..regression import readiness as rd

    if alpha is not None and alpha >= 1:
        raise InputError(f"--alpha {alpha:g} is outside (0, 1)", "use e.g. --alpha 0.05")
    if confidence is not None and confidence >= 100:
        raise InputError(
            f"--confidence {confidence:g} is outside (0, 100)", "use e.g. --confidence 95"
        )
    if confidence is not None and alpha is not None:
        raise InputError(
            "--confidence and --alpha both set the significance level",
            "give one: --confidence 95 is --alpha 0.05",
        )
    if correction not in rd.CORRECTIONS:
        raise InputError(
            f"unknown --correction '{correction}'", f"use one of {', '.join(rd.CORRECTIONS)}"
        )
    return rd.Options(
        confidence=(100 * (1 - alpha) if alpha is not None else (confidence or rd.CONFIDENCE)),
        pity=pity,
        min_fail=min_fail,
        extreme=extreme,
        correction=correction,
        allow_empty=allow_empty,
    )
