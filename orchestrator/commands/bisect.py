"""valorch bisect --check ID --images A1 A2 ... An: the first image where a check went bad,
and the changed components most likely to blame (regression/culprit.py ranks them)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

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
from .placing import where_options

if TYPE_CHECKING:
    from ..services.placing import Where


@where_options
def bisect(
    check: str = typer.Option(..., "--check", "-k", help="The check id (e.g. smoke.matmul.fp32)."),
    images_flag: bool = typer.Option(False, "--images", help="The images follow, oldest first."),
    images: list[str] = typer.Argument(
        None, help="Image aliases, tags or references, oldest first."
    ),
    job: Path = typer.Option(
        None, "--job", "-j", help="A job spec that declares the check (command/pytest)."
    ),
    db: str = DbOption,
    as_json: bool = JsonOption,
    catalog: Path = CatalogOption,
    *,
    where: Where,
) -> None:
    """Run one check in as few images as it takes (at most ⌈log₂ n⌉ + 1) to name the first bad one."""
    from ..services import bisect as service
    from .progress import RunViews

    cat = load_catalog(catalog)
    found = service.bisect(
        check,
        images or [],
        catalog=cat,
        factory=sessions(db),
        progress=RunViews(err, quiet=as_json),
        job=job,
        where=where,
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
                "culprits": [  # ranked by regression/culprit.py, most related first
                    {
                        "rank": i,
                        "component": s.change.subject,
                        "change": s.change.kind,
                        "old": s.change.old,
                        "new": s.change.new,
                        "tier": s.tier,
                        "why": s.why,
                    }
                    for i, s in enumerate(found.suspects, 1)
                ],
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
    suspects, note, limit = found.suspects, found.culprit_note, 25
    if suspects:
        out.print(f"changed components ({note}), most related to the check first:", markup=False)
    elif note:
        out.print(note, markup=False)
    for i, s in enumerate(suspects[:limit], 1):
        c = s.change
        said = {"added": f"added {c.new}", "removed": f"removed (was {c.old})"}
        change = said.get(c.kind, f"{c.old} -> {c.new}")
        out.print(f"  {i:>2}. [{s.tier}] {c.subject}: {change}  ({s.why})", markup=False)
    if len(suspects) > limit:
        out.print(f"  … and {len(suspects) - limit} more (--json lists them all)", markup=False)
