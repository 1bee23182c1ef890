"""valorch images list | show"""

from __future__ import annotations

from pathlib import Path

import typer
from rich.table import Table

from .common import CatalogOption, JsonOption, load_catalog, out, print_json, project_dir

app = typer.Typer(help="The image catalog (images/*.yaml).", no_args_is_help=True)

COLUMNS = ("rocm", "cuda", "cudnn", "pytorch", "ubuntu", "debian", "python", "apex", "torchvision", "tensorboard",
           "magma", "ucx", "ompi", "ofed")


@app.command("list")
def list_images(family: str = typer.Option(None, help="Only this family (rocm, cuda, cpu, local-test)."),
                as_json: bool = JsonOption, catalog: Path = CatalogOption) -> None:
    """Every catalogued image with its expected components."""
    images = [i for i in load_catalog(catalog).images if not family or i.family == family]
    if as_json:
        print_json([i.model_dump(mode="json") for i in images])
        return
    present = [c for c in COLUMNS if any(c in i.components for i in images)]
    table = Table("alias", "backend", *present, "digest", title=f"{len(images)} images")
    for i in images:
        table.add_row(i.alias, i.backend, *(i.components.get(c, "") for c in present),
                      (i.digest or "")[7:19])
    out.print(table)


@app.command("show")
def show_image(name: str = typer.Argument(..., help="Alias, short alias, reference or tag."),
               as_json: bool = JsonOption, catalog: Path = CatalogOption) -> None:
    """One image: reference, digest, backend and expected components."""
    image = load_catalog(catalog).resolve(name)
    if as_json:
        print_json(image.model_dump(mode="json"))
        return
    out.print(f"[bold]{image.alias}[/bold]" + ("  (derived from its tag, not catalogued)" if image.derived else ""))
    for key in ("reference", "digest", "backend", "family", "os", "executor", "notes"):
        value = getattr(image, key)
        if value not in (None, ""):
            out.print(f"  {key:10} {value}")
    for key, value in image.components.items():
        out.print(f"  {key:10} {value}")


@app.command("import-rst")
def import_rst(file: Path = typer.Argument(..., help="A reStructuredText page with a Docker image components list-table."),
               out_path: Path = typer.Option(None, "--out", "-o",
                                             help="Catalog file to create or update [default: images/rocm.yaml]."),
               dry_run: bool = typer.Option(False, "--dry-run", help="Report what would change; write nothing."),
               as_json: bool = JsonOption) -> None:
    """Read a published image components table into catalog entries (idempotent)."""
    from ..services.catalog import plan_rst_import
    from .common import write_output

    out_path = out_path or project_dir() / "images" / "rocm.yaml"
    plan = plan_rst_import(file, out_path)
    written = plan.changed and not dry_run
    if written:
        write_output(plan.text, out_path)
    report = plan.report(str(out_path), written)
    if as_json:
        print_json(report)
        return
    table = Table("alias", "change", "details", title=f"{file.name} → {out_path}")
    for c in report["changes"]:
        table.add_row(c["alias"], c["kind"], "\n".join(c["details"]))
    out.print(table)
    counts = ", ".join(f"{report['counts'][k]} {k}" for k in ("added", "changed", "unchanged", "kept"))
    verb = ("would write" if dry_run else "wrote") if plan.changed else "file unchanged:"
    out.print(f"{report['imported']} images imported ({counts}); {verb} {out_path}")
