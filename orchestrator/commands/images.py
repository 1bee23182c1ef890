"""valorch images list | show | check | pull | import-rst | import-releases"""

from __future__ import annotations

from collections import Counter
from functools import partial
from pathlib import Path

import typer
from rich.markup import escape

from ..words import count
from . import flags
from .common import (
    CatalogOption,
    HostsOption,
    JsonOption,
    end_with,
    load_catalog,
    out,
    out_option,
    print_json,
    project_dir,
    write_validated,
)
from .tables import Column, Table, styled

app = typer.Typer(help="The image catalog (images/*.yaml).", no_args_is_help=True)

COLUMNS = (
    "rocm",
    "cuda",
    "cudnn",
    "pytorch",
    "ubuntu",
    "debian",
    "python",
    "apex",
    "torchvision",
    "tensorboard",
    "magma",
    "ucx",
    "ompi",
    "ofed",
)


@app.command("list")
def list_images(
    family: str = typer.Option(None, help="Only this family (rocm, cuda, cpu, local-test)."),
    present: bool = typer.Option(
        False,
        "--present",
        help="Also show, per host, whether each image is on its engine and with which digest.",
    ),
    hosts_file: Path = HostsOption,
    as_json: bool = JsonOption,
    catalog: Path = CatalogOption,
) -> None:
    """Every catalogued image with its expected components (and, with --present, where it is)."""
    # read from the files every time, as they are now
    images = [i for i in load_catalog(catalog).images if not family or i.family == family]
    if present or hosts_file:
        from ..services.pull import presence

        rows = presence(images, hosts_file)
    else:
        rows = [i.model_dump(mode="json") for i in images]
    if as_json:
        print_json(rows)
        return
    if present or hosts_file:
        table = Table(
            "host",
            "alias",
            "present",
            Column("digest", overflow="fold"),
            Column("catalog pin", overflow="fold"),
            title="images on each host",
        )
        for r in rows:
            state = r["error"] or (styled("green", "yes") if r["present"] else styled("dim", "no"))
            pin = (
                ""
                if not r.get("pinned")
                else ("matches" if r["digest"] == r["pinned"] else r["pinned"])
            )
            table.add_row(r["host"], r["alias"], state, r["digest"] or "", pin)
        out.print(table)
        return
    table = Table(
        "alias",
        "reference (what is pulled)",
        "backend",
        "expected components",
        # a short digest, as docker shows image ids: --json and images show have it whole
        "digest",
        title=count(len(rows), "image"),
        uncut=True,  # aliases and references are what a user copies: never cut, anywhere
    )
    for r in rows:
        table.add_row(
            r["alias"],
            r["reference"],
            r["backend"],
            _components(r["components"]),
            _short_digest(r["digest"]),
        )
    out.print(table)


def _components(components: dict[str, str]) -> str:
    """The catalog's expected components as ``name=value`` words, the headline ones first, so
    that a narrow terminal wraps between them and never cuts a value."""
    names = [c for c in COLUMNS if c in components] + sorted(set(components) - set(COLUMNS))
    return "  ".join(f"{name}={components[name]}" for name in names)


def _short_digest(digest: str | None) -> str:
    """``sha256:`` and the first 12 hex digits, as docker shows an image id."""
    if not digest:
        return ""
    algorithm, _, hexdigits = digest.partition(":")
    return f"{algorithm}:{hexdigits[:12]}" if hexdigits else digest[:19]


@app.command("show")
def show_image(
    name: str = typer.Argument(..., help="Alias, short alias, reference or tag."),
    as_json: bool = JsonOption,
    catalog: Path = CatalogOption,
) -> None:
    """One image: reference, digest, backend and expected components."""
    image = load_catalog(catalog).resolve(name)
    if as_json:
        print_json(image.model_dump(mode="json"))
        return
    out.print(
        f"[bold]{image.alias}[/bold]"
        + ("  (derived from its tag, not catalogued)" if image.derived else "")
    )
    for key in ("reference", "digest", "backend", "family", "os", "executor", "notes"):
        value = getattr(image, key)
        if value not in (None, ""):
            out.print(f"  {key:10} {value}")
    for key, value in image.components.items():
        out.print(f"  {key:10} {value}")
    for key, value in image.labels.items():  # what a published table says that is no version
        out.print(escape(f"  {key:10} {value}  (label)"))


@app.command("import-rst")
def import_rst(
    file: Path = typer.Argument(
        ..., help="A reStructuredText page with a Docker image components list-table."
    ),
    out_path: Path = out_option("Catalog file to create or update [default: images/rocm.yaml]."),
    defs: Path = typer.Option(
        None,
        "--defs",
        help="Where the page's roles and substitutions are defined: ROCm's compatibility-matrix-"
        "historical CSV (for :version-ref:), images/releases.json, or an RST file of "
        "'.. |name| replace::' lines. Without it such cells stay 'unresolved: ROLE'.",
    ),
    dry_run: bool = typer.Option(
        False, "--dry-run", help="Report what would change; write nothing."
    ),
    as_json: bool = JsonOption,
) -> None:
    """Read a published image components table into catalog entries (idempotent), and report
    per image its backend and ROCm version and every cell not read as a version."""
    from ..services.catalog import plan_rst_import, validate_written

    out_path = out_path or project_dir() / "images" / "rocm.yaml"
    plan = plan_rst_import(file, out_path, defs)
    written = plan.changed and not dry_run
    if written:
        # a temporary file beside the catalog, loaded by the catalog loader, then renamed
        out_path.parent.mkdir(parents=True, exist_ok=True)
        write_validated(plan.text, out_path, validate_written)
    report = plan.report(str(out_path), written)
    if as_json:
        print_json(report)
        return
    # what the import understood: each image's backend and ROCm version, and the cells it
    # did not read as versions
    page = report["import"]
    images = Table(
        "image",
        "backend",
        "rocm",
        "labels",
        title=escape(f"{page['page']}: {len(page['images'])} images"),
    )
    for i in page["images"]:
        labels = ", ".join(f"{k}: {v}" for k, v in i["labels"].items())
        images.add_row(i["alias"], i["backend"], i["rocm"] or "-", labels)
    out.print(images)
    for key, title in (("notes", "imported with a note"), ("unread", "unread cells")):
        if not page.get(key):
            out.print(f"{title}: none")
            continue
        table = Table("line", "image", "column", "cell", "why", title=title)
        for u in page[key]:
            table.add_row(str(u["line"]), u["image"], u["column"], u["cell"][:60], u["reason"])
        out.print(table)
    table = Table("alias", "change", "details", title=f"{file.name} → {out_path}")
    for c in report["changes"]:
        table.add_row(c["alias"], c["kind"], "\n".join(c["details"]))
    out.print(table)
    counts = ", ".join(
        f"{report['counts'][k]} {k}" for k in ("added", "changed", "unchanged", "kept")
    )
    verb = ("would write" if dry_run else "wrote") if plan.changed else "file unchanged:"
    out.print(f"{report['imported']} images imported ({counts}); {verb} {out_path}")


@app.command("import-releases")
def import_releases(
    file: Path = typer.Argument(
        ...,
        help="ROCm's compatibility-matrix-historical .csv or PyTorch's RELEASE.md, as published.",
    ),
    out_path: Path = out_option(
        "Release table file to create or update [default: images/releases.json]."
    ),
    as_json: bool = JsonOption,
) -> None:
    """Read a vendor's published release table into the release table kept beside the
    catalog; inventory audit compares images with it."""
    from ..services.catalog import RELEASES_FILE, plan_releases_import, validate_releases

    out_path = out_path or project_dir() / "images" / RELEASES_FILE
    text, summary = plan_releases_import(file, out_path)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    write_validated(text, out_path, validate_releases)
    if as_json:
        print_json({"out": str(out_path), **summary})
        return
    what = (
        f"{summary['releases']} ROCm releases × {summary['rows']} rows"
        if summary["kind"] == "rocm"
        else f"{summary['rows']} PyTorch releases"
    )
    out.print(escape(f"{file.name}: {what} → {out_path}"))


CaOption = typer.Option(
    None,
    "--ca",
    help="PEM file of the CA that signed the registry's certificate "
    "[default: certs.d/<registry>/ca.crt as the engine reads it, else the system CAs].",
)


@app.command("check")
def check(
    names: list[str] = typer.Argument(
        None, help="Aliases or selectors [default: every registry image]."
    ),
    update: bool = typer.Option(
        False, "--update", help="Write the current digests into the catalog (prints the diff)."
    ),
    ca: Path = CaOption,
    timeout: float = typer.Option(
        30.0,
        callback=flags.seconds("--timeout", 3600),
        help="Seconds per registry request, its whole answer included.",
    ),
    as_json: bool = JsonOption,
    catalog: Path = CatalogOption,
) -> None:
    """Resolve each catalogued tag to its digest through the registry's HTTP API (no pull, no
    engine); exit 1 when a tag moved or vanished since the catalog was written."""
    from ..services import images as svc

    directory = catalog or project_dir() / "images"
    cat = load_catalog(directory)
    checks = svc.check_catalog(cat, names or (), ca=str(ca) if ca else None, timeout=timeout)
    updates = svc.plan_update(directory, checks) if update else []
    for u in updates:
        write_validated(u.new, u.path, partial(svc.validate_update, update=u, checks=checks))
    if as_json:
        print_json(
            {
                "images": [c.as_dict() for c in checks],
                "updated": [
                    {"file": str(u.path), "aliases": list(u.aliases), "diff": u.diff()}
                    for u in updates
                ],
            }
        )
    else:
        table = Table(
            "alias",
            "state",
            Column("catalog digest", overflow="fold"),
            Column("registry digest", overflow="fold"),
            "rate limit",
            title="images check",
        )
        style = {
            "same": "green",
            "moved": "red",
            "vanished": "red",
            "new": "yellow",
            "local": "dim",
            "unreachable": "red",
        }
        # a reason many images share (one registry down) is said once, under the table
        shared = Counter(c.message for c in checks if not c.current_digest and c.message)
        notes: dict[str, int] = {}
        for c in checks:
            said = c.current_digest or c.message
            if not c.current_digest and shared[c.message] > 1:
                said = f"[{notes.setdefault(c.message, len(notes) + 1)}] below"
            table.add_row(
                c.alias,
                styled(style[c.state], c.state),
                c.catalog_digest or "",
                said,
                c.rate_limit or "",
            )
        out.print(table)
        for message, n in notes.items():
            out.print(
                f"[{n}] ({count(shared[message], 'image')}) {message}",
                markup=False,
            )
        for u in updates:
            out.print(u.diff(), markup=False)
    end_with(svc.check_ending(checks, update))


@app.command("pull")
def pull(
    names: list[str] = typer.Argument(
        ..., help="Aliases, references or selectors (family:rocm, globs)."
    ),
    hosts_file: Path = HostsOption,
    policy: str = typer.Option(
        "missing",
        "--pull",
        metavar="<missing|always>",
        help="missing (skip images already there) or always.",
    ),
    ca: Path = CaOption,
    as_json: bool = JsonOption,
    catalog: Path = CatalogOption,
) -> None:
    """Pre-stage images on every matching host, concurrently, with per-layer progress. Each host's
    free space is checked against the image's compressed size first: a host without room is
    reported, not filled. Exit 3 when any host could not be staged."""
    from ..services import pull as svc
    from .common import err
    from .progress import PullProgress

    svc.check_policy(policy)
    images = load_catalog(catalog).select(names)
    with PullProgress(err, disable=as_json) as progress:
        outcomes = svc.pull_images(
            images, hosts_file, policy, ca=str(ca) if ca else None, on_event=progress
        )
    if as_json:
        print_json(
            [
                {
                    "host": o.host,
                    "alias": o.alias,
                    "error": o.error,
                    "kind": o.kind or "ok",
                    **(o.staged.meta() if o.staged else {}),
                }
                for o in outcomes
            ]
        )
    else:
        table = Table(
            "host", "alias", "state", "reference / problem", "compressed", title="images pull"
        )
        for o in outcomes:
            size = (
                f"{o.staged.compressed_size / 2**20:.1f} MiB"
                if o.staged and o.staged.compressed_size
                else ""
            )
            state = (
                styled("green", "pulled" if o.staged.pulled else "present")
                if o.staged
                else styled("red", o.kind or "error")
            )
            table.add_row(o.host, o.alias, state, o.staged.reference if o.staged else o.error, size)
        if outcomes:  # no empty table: the images not pulled are said below, with why
            out.print(table)
    end_with(svc.pull_ending(outcomes, svc.never_pulled(images)))
