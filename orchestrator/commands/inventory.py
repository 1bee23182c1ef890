"""valorch inventory audit | diff | show: what an image really holds.

``audit`` gathers the inventory inside the image (no network, no GPU needed),
stores it as a run, and compares it with the catalog's expected components:
exit 0 clean, 1 drift, 2 bad input, 3 infrastructure.
"""

from __future__ import annotations

import json
from enum import Enum
from pathlib import Path

import typer
from pydantic import ValidationError
from rich.table import Table

from .. import audit
from ..catalog import Catalog
from ..errors import InfrastructureError, InputError
from ..executors.inventory import gather_inventory
from ..hosts import detect_local
from ..spec import ImageSpec
from ..store import inventory_queries as iq
from .common import CatalogOption, DbOption, JsonOption, err, load_catalog, out, print_json, sessions, write_output

app = typer.Typer(help="Inventory audit of image components (gather, compare, diff, SBOM).",
                  no_args_is_help=True)


class AuditFormat(str, Enum):
    term = "term"
    md = "md"
    json = "json"
    cyclonedx = "cyclonedx"


class DiffFormat(str, Enum):
    term = "term"
    md = "md"
    json = "json"


_STYLE = {"ok": "green", "drift": "bold red", "missing": "bold red", "unpinned": "yellow",
          "build-mismatch": "yellow"}


# ------------------------------------------------------------- pipeline ---

def gather_and_store(image: ImageSpec, factory, host=None):  # noqa: ANN001, ANN201
    """Gather in the image, validate, store as a run: (run id, digest, inventory)."""
    host = host or detect_local()
    with err.status(f"gathering the inventory of {image.alias} ({image.reference}) ..."):
        raw, problem, digest = gather_inventory(image, host)
    if problem:
        raise InfrastructureError(problem, "valorch images show NAME shows the reference; docker image ls what "
                                  "the engine has (build the test images with make test-images)")
    try:
        inv = audit.parse_inventory(raw)
    except (ValidationError, ValueError) as exc:
        raise InfrastructureError(f"the inventory probe in {image.reference} printed an invalid inventory: "
                                  f"{str(exc)[:400]}") from None
    with factory() as session:
        run = iq.store_inventory(session, image=image, digest=digest, host=host,
                                 executor="host" if image.executor == "host" else "docker", inventory=inv)
        run_id = run.id
        session.commit()
    return run_id, digest, inv


def audit_json(image: ImageSpec, run_id: str, digest: str | None, inv: audit.Inventory,
               findings: list[audit.Finding]) -> dict:
    return {"image": image.alias, "reference": image.reference, "digest": digest, "run": run_id,
            "exit_code": audit.exit_code(findings), "drift": audit.has_drift(findings),
            "findings": [f.model_dump() for f in findings],
            "components": {c.name: c.value for c in inv.components if c.headline},
            "packages": sum(not c.headline for c in inv.components),
            "host_facts": dict(inv.host_facts), "errors": list(inv.errors)}


def findings_table(image: ImageSpec, digest: str | None, inv: audit.Inventory,
                   findings: list[audit.Finding]) -> Table:
    title = f"{image.alias}  {image.reference}" + (f"  {digest[:19]}" if digest else "")
    table = Table("component", "expected", "found", "verdict", "source · evidence", title=title)
    for f in findings:
        if f.kind == "build-mismatch":
            continue
        comp = audit.resolve(inv, f.component)
        where = f"{comp.source} · {comp.evidence}" if comp else ""
        table.add_row(f.component, f.expected or "", f.found or "-", f"[{_STYLE[f.kind]}]{f.kind}[/]", where)
    expected = {audit.resolve(inv, f.component).name for f in findings if audit.resolve(inv, f.component)}
    for comp in inv.components:  # what the catalog does not pin, for the record
        if comp.headline and comp.name not in expected and not comp.name.startswith("pytorch."):
            table.add_row(f"[dim]{comp.name}[/]", "", f"[dim]{comp.value}[/]", "[dim]not pinned[/]",
                          f"[dim]{comp.source} · {comp.evidence}[/]")
    return table


def _print_audit(image: ImageSpec, run_id: str, digest: str | None, inv: audit.Inventory,
                 findings: list[audit.Finding]) -> None:
    out.print(findings_table(image, digest, inv, findings))
    build = [f for f in findings if f.kind == "build-mismatch"]
    built = [c for c in inv.components if c.name.startswith("pytorch.")]
    if built:
        out.print("PyTorch reports: " + ", ".join(f"{c.name[8:]} {c.value}" for c in built))
    for f in build:
        out.print(f"[yellow]build mismatch[/]: {f.message}")
    if not build and built:
        out.print("[green]compiled-against versions agree with the installed libraries[/]")
    for e in inv.errors:
        out.print(f"[yellow]gatherer error[/]: {e}")
    drift = sum(f.drift for f in findings)
    packages = sum(not c.headline for c in inv.components)
    verdict = f"[bold red]{drift} drift[/]" if drift else "[bold green]clean[/]"
    out.print(f"{verdict} · {len([f for f in findings if f.kind != 'build-mismatch'])} expected components, "
              f"{packages} packages · stored as run {run_id}")


@app.command("audit")
def audit_image(
    image: str = typer.Option(..., "--image", "-i", help="Image alias, tag or reference (or 'host')."),
    fmt: AuditFormat = typer.Option(AuditFormat.term, "--format", "-f", help="term, md, json or cyclonedx."),
    out_path: Path = typer.Option(None, "--out", "-o", help="Write the rendered output here."),
    pull: str = typer.Option("missing", "--pull", help="missing, always or never (as for valorch run)."),
    db: str = DbOption, as_json: bool = JsonOption, catalog: Path = CatalogOption,
) -> None:
    """Gather an image's components, store them, compare with the catalog. Exit 1 on drift."""
    spec = load_catalog(catalog).resolve(image)
    if spec.executor == "docker" and not spec.local:  # any reference: pulled (by digest when pinned) first
        from ..registry import RegistryClient
        from ..services.pull import check_policy, stage
        from .progress import PullProgress

        with PullProgress(err, disable=as_json) as progress:
            staged = stage(spec, detect_local(), check_policy(pull), RegistryClient(), progress)
        if staged.index_digest and not spec.digest:
            spec = spec.model_copy(update={"digest": staged.index_digest})
    run_id, digest, inv = gather_and_store(spec, sessions(db))
    findings = audit.compare(inv, dict(spec.components))
    fmt = AuditFormat.json if as_json else fmt
    if fmt is AuditFormat.json:
        text = json.dumps(audit_json(spec, run_id, digest, inv, findings), indent=2, sort_keys=True)
        write_output(text, out_path)
    elif fmt is AuditFormat.md:
        write_output(audit.render_findings_md(findings, spec.alias, inv), out_path)
    elif fmt is AuditFormat.cyclonedx:
        from datetime import datetime, timezone

        from ..sbom import bom_json

        write_output(bom_json(inv, spec.reference, digest=_digest(digest), timestamp=datetime.now(timezone.utc)),
                     out_path)
    else:
        _print_audit(spec, run_id, digest, inv, findings)
    raise typer.Exit(audit.exit_code(findings))


def _digest(digest: str | None) -> str | None:
    """A registry digest is the SBOM's subject; an image id of a local build is not one."""
    return digest if digest and digest.startswith("sha256:") else None


# ------------------------------------------------------------------ diff ---

def _side(name: str, cat: Catalog, factory, stored: bool) -> tuple[str, audit.Inventory]:  # noqa: ANN001
    """A run id (or unique prefix) of a stored inventory, else an image gathered now
    (or its latest stored inventory with --stored)."""
    with factory() as session:
        found = iq.load_inventory(session, name) if len(name) >= 4 else None
        if found:
            run, inv = found
            return f"{run.image.alias}@{run.id[:8]}", inv
    spec = cat.resolve(name)
    if stored:
        with factory() as session:
            found = iq.latest_inventory(session, spec.alias)
        if found is None:
            raise InputError(f"no stored inventory of {spec.alias}",
                             f"run valorch inventory audit --image {spec.alias} first, or drop --stored")
        return f"{spec.alias}@{found[0].id[:8]}", found[1]
    # the same image (by digest) was inventoried before: an inventory is a function of the
    # image's content, so it is reused instead of gathered (and stored) again
    from ..executors.inventory import image_digest

    digest = image_digest(spec, detect_local())
    if digest:
        with factory() as session:
            found = iq.inventory_of_digest(session, digest)
        if found is not None:
            return f"{spec.alias}@{found[0].id[:8]}", found[1]
    _, _, inv = gather_and_store(spec, factory)
    return spec.alias, inv


@app.command("diff")
def diff_images(
    a: str = typer.Argument(..., help="Image alias/tag, or the id of a stored inventory run."),
    b: str = typer.Argument(..., help="Image alias/tag, or the id of a stored inventory run."),
    stored: bool = typer.Option(False, "--stored", help="Use the latest stored inventory of an image, not a new one."),
    packages: bool = typer.Option(False, "--packages", help="List pip:/deb: package changes in the terminal too."),
    fmt: DiffFormat = typer.Option(DiffFormat.term, "--format", "-f", help="term, md or json."),
    out_path: Path = typer.Option(None, "--out", "-o", help="Write the rendered output here."),
    db: str = DbOption, as_json: bool = JsonOption, catalog: Path = CatalogOption,
) -> None:
    """Component by component: what changed from image A to image B."""
    cat, factory = load_catalog(catalog), sessions(db)
    (name_a, inv_a), (name_b, inv_b) = _side(a, cat, factory, stored), _side(b, cat, factory, stored)
    changes = audit.diff(inv_a, inv_b)
    fmt = DiffFormat.json if as_json else fmt
    if fmt is DiffFormat.json:
        write_output(audit.render_diff_json(changes, name_a, name_b), out_path)
    elif fmt is DiffFormat.md:
        write_output(audit.render_diff_md(changes, name_a, name_b), out_path)
    else:
        _print_diff(changes, name_a, name_b, packages)


def _print_diff(changes: list[audit.Change], a: str, b: str, packages: bool) -> None:
    head = [c for c in changes if ":" not in c.name]
    pkgs = [c for c in changes if ":" in c.name]
    table = Table("component", a, b, "change", title=f"inventory diff: {a} → {b}")
    style = {"changed": "yellow", "added": "green", "removed": "red"}
    for c in head + (pkgs if packages else []):
        table.add_row(c.name, c.old or "-", c.new or "-", f"[{style[c.kind]}]{c.kind}[/]")
    if head or (packages and pkgs):
        out.print(table)
    else:
        out.print("no headline component changed")
    counts = {k: sum(c.kind == k for c in pkgs) for k in ("added", "removed", "changed")}
    out.print(f"packages: {counts['added']} added, {counts['removed']} removed, {counts['changed']} changed"
              + ("" if packages or not pkgs else " (--packages lists them)"))


# ------------------------------------------------------------------ show ---

@app.command("show")
def show(
    run: str = typer.Argument(..., help="Run id (or a unique prefix) of a stored inventory."),
    fmt: AuditFormat = typer.Option(AuditFormat.term, "--format", "-f", help="term, md, json or cyclonedx."),
    packages: bool = typer.Option(False, "--packages", help="List every pip:/deb: package in the terminal."),
    out_path: Path = typer.Option(None, "--out", "-o", help="Write the rendered output here."),
    db: str = DbOption, as_json: bool = JsonOption,
) -> None:
    """A stored inventory; --format cyclonedx exports a CycloneDX 1.5 SBOM."""
    with sessions(db)() as session:
        found = iq.load_inventory(session, run)
        if found is None:
            raise InputError(f"no stored inventory for run '{run}'",
                             "valorch inventory list shows the stored inventories")
        row, inv = found
        alias, reference, digest, started = row.image.alias, row.image.reference, row.image.digest, row.started
        expected = dict(row.image.components or {})
        run_id = row.id
    fmt = AuditFormat.json if as_json else fmt
    if fmt is AuditFormat.cyclonedx:
        from datetime import timezone

        from ..sbom import bom_json

        write_output(bom_json(inv, reference, digest=_digest(digest), timestamp=started.replace(tzinfo=timezone.utc)),
                     out_path)
    elif fmt is AuditFormat.json:
        write_output(json.dumps({"run": run_id, "image": alias, "reference": reference, "digest": digest,
                                 "started": started.isoformat(), **inv.model_dump(mode="json")},
                                indent=2, sort_keys=True), out_path)
    elif fmt is AuditFormat.md:
        write_output(audit.render_findings_md(audit.compare(inv, expected), alias, inv), out_path)
    else:
        table = Table("component", "value", "source", "evidence", title=f"{alias}  run {run_id}  {started:%Y-%m-%d %H:%M}")
        for c in inv.components:
            if c.headline or packages:
                table.add_row(c.name, c.value, c.source, c.evidence)
        out.print(table)
        out.print(f"{sum(not c.headline for c in inv.components)} packages"
                  + ("" if packages else " (--packages lists them)"))


@app.command("list")
def list_inventories(image: str = typer.Option(None, "--image", "-i", help="Only this image (alias or reference)."),
                     limit: int = typer.Option(50, help="At most this many."),
                     db: str = DbOption, as_json: bool = JsonOption) -> None:
    """Stored inventories, newest first."""
    with sessions(db)() as session:
        rows = [{"run": r.id, "image": r.image.alias, "reference": r.image.reference, "digest": r.image.digest,
                 "job": r.job, "started": r.started.isoformat(timespec="seconds")}
                for r in iq.inventory_runs(session, image, limit)]
    if as_json:
        print_json(rows)
        return
    table = Table("run", "image", "reference", "job", "started", title=f"{len(rows)} stored inventories")
    for r in rows:
        table.add_row(r["run"][:8], r["image"], r["reference"], r["job"], r["started"])
    out.print(table)
