"""valorch matrix render | publish | versions"""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, cast

import typer

from . import flags
from .common import (
    DbOption,
    JsonOption,
    OutOption,
    SinceOption,
    deferred_sessions,
    load_catalog,
    out,
    print_json,
    write_output,
)
from .tables import Table as RichTable

if TYPE_CHECKING:
    from datetime import datetime

app = typer.Typer(help="The compatibility matrix from stored results.", no_args_is_help=True)
#: the project's image catalog, loaded when a layout reads it
catalog = partial(load_catalog, None)

FormatOpt = typer.Option(
    "md",
    "--format",
    "-f",
    metavar="<md|rst|html|json>",
    help="md, rst, html or json (--json is the same as --format json).",
)
LayoutOpt = typer.Option(
    "checks",
    "--layout",
    "-l",
    metavar="<layout>",
    help="checks, features, seed-features (the seed page's sections, "
    "descriptions and since columns), since, components, libraries (critical libraries per "
    "image, from inventories), summary or tiers.",
)
RowsOpt = typer.Option(
    None, "--rows", metavar="<features|checks>", help="features or checks [default: per layout]."
)
ColumnsOpt = typer.Option(
    None,
    "--columns",
    metavar="<images|backends|hosts>",
    help="images, backends or hosts [default: images; tiers: backends].",
)
ImageOpt = typer.Option(
    None, "--image", help="Only images whose alias matches these globs (repeatable)."
)
PolicyOpt = typer.Option(
    None, "--tier-policy", help="YAML file overriding the tier policy (tiers layout)."
)
JobOpt = typer.Option(
    None,
    "--job",
    help="Only runs of this job (its name in the job spec, e.g. nightly; "
    "adhoc: runs of valorch run --image; bisect: bisect runs).",
)
AdhocOpt = typer.Option(
    False,
    "--include-adhoc",
    help="Let ad-hoc, bisect and --cpu-only runs feed the matrix (named jobs only otherwise).",
)
KnownOpt = typer.Option(
    None,
    "--known-issues",
    help="Known-issues YAML: a failure a live entry excuses shows as ⚑ known issue, as in "
    "qualify and diff.",
)
FreshOpt = typer.Option(
    7, "--fresh-days", help="Cells whose evidence is older than this many days are marked stale."
)


@app.command("render")
def render(
    fmt: str = FormatOpt,
    layout: str = LayoutOpt,
    rows: str = RowsOpt,
    columns: str = ColumnsOpt,
    image: list[str] = ImageOpt,
    since: str = SinceOption,
    tier_policy: Path = PolicyOpt,
    job: str = JobOpt,
    version: str = typer.Option(
        None, "--version", help="Render this published version (immutable)."
    ),
    out_path: Path = OutOption,
    fragment: bool = typer.Option(
        False,
        "--fragment",
        help="Only the table(s) and notes, without page "
        "title or header: for `.. include::` in a docs page (md, rst, html).",
    ),
    status: str = typer.Option(
        None,
        "--status",
        callback=flags.statuses("--status"),
        help="Only rows with a cell in these statuses, e.g. fail,crash.",
    ),
    include_adhoc: bool = AdhocOpt,
    fresh_days: int = FreshOpt,
    releases: Path = typer.Option(
        None,
        "--releases",
        callback=flags.releases_file,
        help="Release table (valorch images import-releases): the libraries layout shows the "
        "version each image's ROCm release publishes beside the measured one.",
    ),
    known_issues: Path = KnownOpt,
    db: str = DbOption,
) -> None:
    """A matrix: each cell the newest final verdict of its check on that image and host class, dated;
    or a published version."""
    from ..services import matrix as service

    service.choice(fmt, service.FORMATS, "--format")
    service.choice(layout, service.LAYOUTS, "--layout")
    service.check_fragment(fmt, fragment)
    service.fresh_window(fresh_days)
    if version:
        doc = service.published(deferred_sessions(db), version)
    else:
        query = service.MatrixQuery(
            layout,
            rows,
            columns,
            tuple(image or ()),
            cast("datetime | None", since),  # parsed by flags.date
            tier_policy,
            job,
            include_adhoc,
            fresh_days,
            releases,
            known_issues,
        )
        doc = service.build_document(deferred_sessions(db), db, catalog, query)
    chosen = cast("tuple[str, ...]", status)  # flags.statuses parsed it
    write_output(service.render_document(doc, fmt, fragment, chosen), out_path)


@app.command("publish")
def publish(
    version: str = typer.Option(
        ...,
        "--version",
        callback=flags.version_name("--version"),
        help="The version name, e.g. v0.3 (immutable): 1 to 64 characters "
        "of letters, digits, '.', '_' and '-'.",
    ),
    layout: str = LayoutOpt,
    rows: str = RowsOpt,
    columns: str = ColumnsOpt,
    image: list[str] = ImageOpt,
    since: str = SinceOption,
    tier_policy: Path = PolicyOpt,
    job: str = JobOpt,
    include_adhoc: bool = AdhocOpt,
    fresh_days: int = FreshOpt,
    known_issues: Path = KnownOpt,
    db: str = DbOption,
    as_json: bool = JsonOption,
) -> None:
    """Store an immutable snapshot that `matrix render --version` renders again byte for byte
    (named jobs only, unless --job adhoc or --include-adhoc)."""
    from ..services import matrix as service

    service.fresh_window(fresh_days)
    query = service.MatrixQuery(
        layout,
        rows,
        columns,
        tuple(image or ()),
        cast("datetime | None", since),  # parsed by flags.date
        tier_policy,
        job,
        include_adhoc,
        fresh_days,
        known_issues=known_issues,
    )
    done = service.publish(deferred_sessions(db), db, catalog, version, query)
    if as_json:
        print_json(done)
    else:
        out.print(
            f"published matrix {version}: {done['layout']}, {done['rows']} rows, {done['cells']} cells, "
            f"last verified {done['last_verified']}"
        )


@app.command("versions")
def versions(db: str = DbOption, as_json: bool = JsonOption) -> None:
    """Published matrix versions, oldest first."""
    from ..services import matrix as service

    rows = service.versions(deferred_sessions(db))
    if as_json:
        print_json(
            [
                {
                    "version": v["version"],
                    "published": v["published"].isoformat(),
                    "last_verified": v["last_verified"].date().isoformat(),
                    "layout": v["layout"],
                    "cells": v["cells"],
                }
                for v in rows
            ]
        )
        return
    table = RichTable("version", "published (UTC)", "last verified", "layout", "cells")
    for v in rows:
        table.add_row(
            v["version"],
            v["published"].strftime("%Y-%m-%d %H:%M"),
            v["last_verified"].strftime("%Y-%m-%d"),
            v["layout"],
            str(v["cells"]),
        )
    out.print(table)
