"""valorch bisect --check ID --images A1 A2 ... An: the first image where a check went bad."""

from __future__ import annotations

from pathlib import Path

import typer

from . import flags
from .common import (
    CatalogOption,
    DbOption,
    JsonOption,
    err,
    fit,
    load_catalog,
    out,
    print_json,
    sessions,
)


def bisect(
    check: str = typer.Option(..., "--check", "-k", help="The check id (e.g. smoke.matmul.fp32)."),
    images_flag: bool = typer.Option(False, "--images", help="The images follow, oldest first."),
    images: list[str] = typer.Argument(
        None, help="Image aliases, tags or references, oldest first."
    ),
    job: Path = typer.Option(
        None, "--job", "-j", help="A job spec that declares the check (command/pytest)."
    ),
    cpu_only: bool = typer.Option(False, "--cpu-only", help="Run GPU images on a CPU host."),
    hosts_file: Path = flags.option(
        None, "--hosts", envvar="VALORCH_HOSTS", applies=flags.HOSTS, help="Host inventory YAML."
    ),
    db: str = DbOption,
    as_json: bool = JsonOption,
    catalog: Path = CatalogOption,
) -> None:
    """Run one check in as few images as it takes (at most ⌈log₂ n⌉ + 1) to name the first bad one."""
    from ..render.bisect import suspects_json, suspects_text
    from ..services import bisect as service

    cat = load_catalog(catalog)
    found = service.bisect(
        check,
        images or [],
        catalog=cat,
        factory=sessions(db),
        job=job,
        cpu_only=cpu_only,
        hosts_file=hosts_file,
    )
    if as_json:
        print_json(
            {
                "check": check,
                "images": list(found.images),
                "first_bad": found.first_bad,
                "last_good": found.last_good,
                "runs": len(found.probes),
                "budget": found.budget,
                "probes": [
                    {"image": p.image, "verdict": p.verdict, "run": p.run_id, "message": p.message}
                    for p in found.probes
                ],
                "culprits": suspects_json(found.suspects),
                "culprit_note": found.culprit_note,
            }
        )
        return
    for p in found.probes:
        err.print(f"  {p.image}: {p.verdict} (run {p.run_id[:8]})")
    if found.last_good is None:  # (every image good is exit 2 in the service)
        out.print(
            f"{check} is already bad in the first image {found.first_bad} "
            f"({len(found.probes)} runs of at most {found.budget})"
        )
    else:
        bad = next(p for p in found.probes if p.image == found.first_bad)
        out.print(
            f"{check} went bad in {found.first_bad} ({bad.verdict}: {fit(bad.message, 200)}); "
            f"last good {found.last_good} ({len(found.probes)} runs of at most {found.budget})"
        )
    text = suspects_text(found.suspects, found.culprit_note)
    if text:
        out.print(text.rstrip("\n"), markup=False, highlight=False)
