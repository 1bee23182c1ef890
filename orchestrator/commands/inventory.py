"""valorch inventory audit | diff | show: what an image really holds.

``audit`` gathers the inventory inside the image (no network, no GPU needed),
stores it as a run, and compares it with the catalog's expected components:
exit 0 clean, 1 drift, 2 bad input, 3 infrastructure.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.markup import escape

from .. import satellites
from . import flags
from .common import (
    CatalogOption,
    DbOption,
    JsonOption,
    err,
    load_catalog,
    out,
    out_option,
    print_json,
    sessions,
    write_output,
)
from .tables import Table, styled


def _write_sbom(inv: Inventory, reference: str, digest: str | None, at: Any, path: Path) -> None:
    """The inventory as a CycloneDX SBOM (the sbom satellite), stamped ``at`` (UTC)."""
    sbom = satellites.load("sbom", "render", "--format cyclonedx")
    timestamp = at.replace(tzinfo=timezone.utc)
    write_output(sbom.bom_json(inv, reference, digest=digest, timestamp=timestamp), path)


if TYPE_CHECKING:
    from ..audit import Finding
    from ..components import Inventory
    from ..services import published
    from ..spec import ImageSpec

app = typer.Typer(
    help="Inventory audit of image components (gather, compare, diff, SBOM).", no_args_is_help=True
)


class AuditFormat(str, Enum):
    term = "term"
    md = "md"
    json = "json"
    cyclonedx = "cyclonedx"


class DiffFormat(str, Enum):
    term = "term"
    md = "md"
    json = "json"


_AuditFormatOpt = flags.option(
    AuditFormat.term,
    "--format",
    "-f",
    applies=flags.FORMAT,
    help="term, md, json or cyclonedx.",
    callback=flags.satellite_choice("--format", "cyclonedx", "sbom"),
)
_OutOpt = out_option("Write the rendered output here.")

_STYLE = {
    "ok": "green",
    "drift": "bold red",
    "missing": "bold red",
    "unpinned": "yellow",
    "build-mismatch": "yellow",
    "broken": "bold red",
    "differs": "bold red",
    # the published claims' verdicts (drift too)
    "agrees": "green",
    "lacking": "yellow",
    "unpublished": "bold red",
}


def _beside(comp: Any, value: str) -> str:
    """A component's version with the version its package manager installed, where the
    library said its own (a Debian ROCm library: rocBLAS 4.4.1 from librocblas4 6.4.4-4)."""
    package, version = comp.extra.get("package"), comp.extra.get("package_version")
    if package and version and comp.source != "dpkg" and not comp.extra.get("loaded"):
        return f"{value} ({package} {version})"
    return value


def findings_table(
    image: ImageSpec, digest: str | None, inv: Inventory, findings: list[Finding]
) -> Table:
    from .. import audit

    named = [image.alias] + ([image.reference] if image.reference != image.alias else [])
    title = "  ".join(named + ([digest] if digest else []))  # "host", never "host  host"
    table = Table("component", "expected", "found", "verdict", "source · evidence", title=title)
    broken = {f.component for f in findings if f.kind == "broken"}
    pinned = {f.component: f.expected for f in findings if f.kind != "broken" and f.expected}
    for f in findings:
        if f.kind in ("build-mismatch", "differs") or (f.kind == "ok" and f.component in broken):
            continue  # a broken component is one row: its version matching does not make it ok
        comp = audit.resolve(inv, f.component)
        where = f"{comp.source} · {comp.evidence}" if comp else ""
        verdict = "installed but does not import" if f.kind == "broken" else f.kind
        where = f"{where} · {f.evidence}" if f.kind == "broken" else where  # the image's own words
        wanted = f.expected or (pinned.get(f.component, "") if f.kind == "broken" else "")
        found = _beside(comp, f.found or "-") if comp else f.found or "-"
        if comp and comp.extra.get("loaded"):  # only package metadata: say it was not seen loaded
            found = f"{found} ({comp.extra['loaded']})"
        table.add_row(f.component, wanted or "", found, styled(_STYLE[f.kind], verdict), where)
    resolved = (audit.resolve(inv, f.component) for f in findings)
    # a broken component is listed once, as broken
    expected = {c.name for c in resolved if c} | {f.component for f in findings}
    for comp in inv.components:  # what the catalog does not pin, for the record
        if comp.headline and comp.name not in expected and not comp.name.startswith("pytorch."):
            table.add_row(
                styled("dim", comp.name),
                "",
                styled("dim", comp.extra.get("loaded") or _beside(comp, comp.value)),
                styled("dim", "not pinned"),
                styled("dim", f"{comp.source} · {comp.evidence}"),
            )
    return table


@app.command("audit")
def audit_image(
    image: str = typer.Option(
        ..., "--image", "-i", help="Image alias, tag or reference (or 'host')."
    ),
    fmt: AuditFormat = _AuditFormatOpt,
    out_path: Path = _OutOpt,
    pull: str = typer.Option(
        "missing",
        "--pull",
        metavar="<missing|always|never>",
        help="missing, always or never (as for valorch run).",
    ),
    releases: Path = typer.Option(
        None,
        "--releases",
        callback=flags.releases_file,
        help="Release table (valorch images import-releases) to compare the measured versions "
        "with [default: releases.json beside the catalog, when there is one].",
    ),
    release: str = typer.Option(
        None,
        "--release",
        help="The ROCm release whose published library versions the image is compared with "
        "[default: the ROCm the image measures, else its catalog entry's].",
    ),
    db: str = DbOption,
    as_json: bool = JsonOption,
    catalog: Path = CatalogOption,
) -> None:
    """Gather an image's components, store them, compare with the catalog (exit 1 on drift)
    and with the published release tables (shown, not gating)."""
    from ..render import audit as render_audit
    from ..services import inventory as service
    from ..services import published
    from .common import project_dir
    from .progress import PullProgress

    spec = load_catalog(catalog).resolve(image)
    # any reference: pulled (by digest when pinned) first
    with PullProgress(err, disable=as_json) as progress:
        spec = service.stage(spec, pull, progress)
    table_path = releases or (catalog or project_dir() / "images") / "releases.json"
    done = service.audit_image(spec, sessions(db), status=err.status)
    run_id, digest, inv, findings = done.run_id, done.digest, done.inventory, list(done.findings)
    claims = published.compare(inv, spec, table_path, release)
    fmt = AuditFormat.json if as_json else fmt
    if fmt is AuditFormat.json:
        doc = {**done.to_json(), "published": claims.to_json()}
        write_output(json.dumps(doc, indent=2, sort_keys=True), out_path)
    elif fmt is AuditFormat.md:
        write_output(render_audit.render_findings_md(findings, spec.alias, inv), out_path)
    elif fmt is AuditFormat.cyclonedx:
        _write_sbom(inv, spec.reference, digest, datetime.now(timezone.utc), out_path)
    else:
        out.print(findings_table(spec, digest, inv, findings))
        build = [f for f in findings if f.kind == "build-mismatch"]
        built = [c for c in inv.components if c.name.startswith("pytorch.")]
        if built:
            out.print("PyTorch reports: " + ", ".join(f"{c.name[8:]} {c.value}" for c in built))
        for f in build:
            out.print(f"[yellow]build mismatch[/]: {f.message}")
        if not build and built:
            out.print("[green]compiled-against versions agree with the installed libraries[/]")
        for f in findings:
            if f.kind == "differs":
                out.print(f"[bold red]versions differ[/]: {f.message}")
        for e in inv.errors:
            out.print(f"[yellow]gatherer error[/]: {e}")
        broken = sum(f.kind == "broken" for f in findings)
        differ = sum(f.kind == "differs" for f in findings)
        drift = sum(f.drift for f in findings) - broken - differ
        packages = sum(not c.headline for c in inv.components)
        problems = (
            ([f"{drift} drift"] if drift else [])
            + ([f"{broken} installed but not importing"] if broken else [])
            + ([f"{differ} module version(s) not the package manager's"] if differ else [])
        )
        verdict = (
            f"[bold red]not clean: {', '.join(problems)}[/]" if problems else "[bold green]clean[/]"
        )
        out.print(
            f"{verdict} · {len([f for f in findings if f.kind not in ('build-mismatch', 'broken', 'differs')])} expected "
            "components, "
            f"{packages} packages · stored as run {run_id}"
        )
        _print_claims(claims)
    raise typer.Exit(done.exit_code)


def _print_claims(claims: published.Claims) -> None:
    """The published versions beside the measured ones (when a release table is there)."""
    if claims.table is None:
        return
    title = escape(
        f"published claims · {claims.table}"
        + (f" · ROCm {claims.release}" if claims.release else "")
    )
    table = Table("library", "published", "measured", "verdict", title=title)
    for f in claims.findings:
        table.add_row(f.subject, f.published, f.measured or "-", styled(_STYLE[f.kind], f.kind))
    if claims.findings:
        out.print(table)
    if claims.note:
        out.print(f"[yellow]published claims[/]: {escape(claims.note)}")
    counts = ", ".join(
        f"{claims.count(k)} {k}" for k in ("agrees", "drift", "lacking", "unpublished")
    )
    out.print(f"published claims: {counts} (shown, not gating)")


@app.command("diff")
def diff_images(
    a: str = typer.Argument(..., help="Image alias/tag, or the id of a stored inventory run."),
    b: str = typer.Argument(..., help="Image alias/tag, or the id of a stored inventory run."),
    stored: bool = typer.Option(
        False, "--stored", help="Use the latest stored inventory of an image, not a new one."
    ),
    packages: bool = typer.Option(
        False, "--packages", help="List pip:/deb: package changes in the terminal too."
    ),
    fmt: DiffFormat = flags.option(
        DiffFormat.term, "--format", "-f", applies=flags.FORMAT, help="term, md or json."
    ),
    out_path: Path = _OutOpt,
    db: str = DbOption,
    as_json: bool = JsonOption,
    catalog: Path = CatalogOption,
) -> None:
    """Component by component: what changed from image A to image B."""
    from ..render import audit as render_audit
    from ..services import inventory as service

    name_a, name_b, changes = service.diff(
        a, b, load_catalog(catalog), sessions(db), stored, status=err.status
    )
    fmt = DiffFormat.json if as_json else fmt
    if fmt is not DiffFormat.term:
        render = (
            render_audit.render_diff_json if fmt is DiffFormat.json else render_audit.render_diff_md
        )
        write_output(render(changes, name_a, name_b), out_path)
        return
    head = [c for c in changes if ":" not in c.subject]
    pkgs = [c for c in changes if ":" in c.subject]
    table = Table(
        "component", name_a, name_b, "change", title=f"inventory diff: {name_a} → {name_b}"
    )
    style = {"changed": "yellow", "added": "green", "removed": "red"}
    for c in head + (pkgs if packages else []):
        table.add_row(c.subject, c.old or "-", c.new or "-", styled(style[c.kind], c.kind))
    if head or (packages and pkgs):
        out.print(table)
    else:
        out.print("no headline component changed")
    counts = {k: sum(c.kind == k for c in pkgs) for k in ("added", "removed", "changed")}
    out.print(
        f"packages: {counts['added']} added, {counts['removed']} removed, {counts['changed']} changed"
        + ("" if packages or not pkgs else " (--packages lists them)")
    )


@app.command("show")
def show(
    run: str = typer.Argument(
        ...,
        help="Run id (or a unique prefix) of a stored inventory, or an image alias/tag: its newest.",
    ),
    fmt: AuditFormat = _AuditFormatOpt,
    packages: bool = typer.Option(
        False, "--packages", help="List every pip:/deb: package in the terminal."
    ),
    out_path: Path = _OutOpt,
    db: str = DbOption,
    as_json: bool = JsonOption,
    catalog: Path = CatalogOption,
) -> None:
    """A stored inventory; --format cyclonedx exports a CycloneDX 1.5 SBOM."""
    from .. import audit
    from ..render import audit as render_audit
    from ..services import inventory as service

    found = service.stored(sessions(db), run, load_catalog(catalog))
    inv, alias, reference, digest = found.inventory, found.alias, found.reference, found.digest
    started, run_id = found.started, found.run_id
    fmt = AuditFormat.json if as_json else fmt
    if fmt is AuditFormat.cyclonedx:
        _write_sbom(inv, reference, digest, started, out_path)
    elif fmt is AuditFormat.json:
        write_output(
            json.dumps(
                {
                    "run": run_id,
                    "image": alias,
                    "reference": reference,
                    "digest": digest,
                    "started": started.isoformat(),
                    **inv.model_dump(mode="json"),
                },
                indent=2,
                sort_keys=True,
            ),
            out_path,
        )
    elif fmt is AuditFormat.md:
        write_output(render_audit.render_findings_md(found.findings(), alias, inv), out_path)
    else:
        table = Table(
            "component",
            "value",
            "source",
            "evidence",
            title=f"{alias}  run {run_id}  {started:%Y-%m-%d %H:%M}",
        )
        for c in inv.components:
            if c.headline or packages:
                table.add_row(c.name, _beside(c, c.value), c.source, c.evidence)
        out.print(table)
        for f in audit.version_findings(inv):
            out.print(f"[bold red]versions differ[/]: {f.message}")
        out.print(
            f"{sum(not c.headline for c in inv.components)} packages"
            + ("" if packages else " (--packages lists them)")
        )


@app.command("list")
def list_inventories(
    image: str = typer.Option(None, "--image", "-i", help="Only this image (alias or reference)."),
    limit: int = typer.Option(
        50, callback=flags.integer("--limit", 1, 1_000_000), help="At most this many."
    ),
    db: str = DbOption,
    as_json: bool = JsonOption,
) -> None:
    """Stored inventories, newest first."""
    from ..services.run_list import inventories

    rows = inventories(db, image, limit)
    if as_json:
        print_json(rows)
        return
    table = Table(
        "run", "image", "reference", "job", "started", title=f"{len(rows)} stored inventories"
    )
    for r in rows:
        table.add_row(r["run"][:8], r["image"], r["reference"], r["job"], r["started"])
    out.print(table)
