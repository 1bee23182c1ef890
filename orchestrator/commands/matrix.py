"""valorch matrix render | publish | versions"""

from __future__ import annotations

import fnmatch
import json
from datetime import datetime
from pathlib import Path

import typer
import yaml
from rich.table import Table as RichTable

from .. import __version__
from ..errors import InputError
from ..matrix import Observation
from ..matrix_doc import Document, Header
from ..matrix_layouts import COLUMNS, LAYOUTS, ROWS, CatalogImage, RunInfo
from ..matrix_layouts import checks_table, components_table, since_table, summary_table, tiers_table
from ..matrix_tiers import Policy
from ..render.html import document_html
from ..render.markdown import document_md
from ..render.rst import document_rst
from ..store import matrix_store
from ..store.db import public_url
from ..store.queries import now
from .common import DbOption, JsonOption, load_catalog, out, print_json, sessions, write_output

app = typer.Typer(help="The compatibility matrix from stored results.", no_args_is_help=True)
FORMATS = ("md", "rst", "html", "json")
DEFAULT_ROWS = {"checks": "checks", "features": "features", "since": "features", "summary": "features",
                "tiers": "checks", "components": "checks"}

FormatOpt = typer.Option("md", "--format", "-f", help="md, rst, html or json.")
LayoutOpt = typer.Option("checks", "--layout", "-l", help="checks, features, since, components, summary or tiers.")
RowsOpt = typer.Option(None, "--rows", help="features or checks [default: per layout].")
ColumnsOpt = typer.Option(None, "--columns", help="images, backends or hosts [default: images; tiers: backends].")
ImageOpt = typer.Option(None, "--image", help="Only images whose alias matches these globs (repeatable).")
SinceOpt = typer.Option(None, "--since", help="Only runs started on or after this date (YYYY-MM-DD).")
PolicyOpt = typer.Option(None, "--tier-policy", help="YAML file overriding the tier policy (tiers layout).")
JobOpt = typer.Option(None, "--job", help="Only runs of this job (its name in the job spec, e.g. nightly).")


def _choice(value: str, allowed: tuple[str, ...], flag: str) -> str:
    if value not in allowed:
        raise InputError(f"unknown {flag} '{value}'", f"use one of: {', '.join(allowed)}")
    return value


def _policy(path: Path | None) -> Policy:
    if path is None:
        return Policy()
    try:
        return Policy.from_mapping(yaml.safe_load(path.read_text(encoding="utf-8")))
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror}", "pass a readable YAML file") from None
    except (yaml.YAMLError, ValueError) as exc:
        raise InputError(f"{path}: {exc}", "keys: first_class_min_pass, first_class_max_crashes, "
                         "best_effort_min_pass, experimental_min_pass") from None


def _since(value: str | None) -> datetime | None:
    if not value:
        return None
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        raise InputError(f"--since '{value}' is not a date", "write it as YYYY-MM-DD") from None


def build_document(db: str | None, layout: str, rows: str | None, columns: str, images: list[str],
                   since: str | None, policy_path: Path | None, job: str | None = None) -> Document:
    layout = _choice(layout, LAYOUTS, "--layout")
    rows = _choice(rows or DEFAULT_ROWS[layout], ROWS, "--rows")
    columns = _choice(columns or ("backends" if layout == "tiers" else "images"), COLUMNS, "--columns")
    policy, since_dt = _policy(policy_path), _since(since)
    params = {"layout": layout, "rows": rows, "columns": columns, "images": list(images), "since": since}
    if job:
        params["job"] = job
    with sessions(db)() as session:
        if layout == "components":
            catalog = [i for i in load_catalog(None).images
                       if not images or any(fnmatch.fnmatchcase(i.alias, s) for s in images)]
            inventory = matrix_store.latest_inventory(session)
            table = components_table([CatalogImage(i.alias, i.reference, i.digest, dict(i.components))
                                      for i in catalog], inventory)
            used = sorted(run_id for run_id, _ in inventory.values())
            ended = matrix_store.ended_of(session, used)
            source = ["the image catalog (images/*.yaml)", f"inventory runs in {public_url(db)}: {len(used)}"]
        else:
            runs = matrix_store.matrix_runs(session, images, since_dt, job)
            if not runs:
                raise InputError("no finished runs in the results database" + (f" of job {job}" if job else "") +
                                 (f" for {', '.join(images)}" if images else "") + (f" since {since}" if since else ""),
                                 "run something first: valorch run --image host")
            infos = [RunInfo(r.id, r.image.alias, r.image.backend, r.host.name, dict(r.image.components), r.ended)
                     for r in runs]
            obs = [Observation(column=x.run_id, check=x.check_id, feature=x.feature, kind=x.kind, library=x.library,
                               status=x.status, attempt=x.attempt, run_id=x.run_id, message=x.message)
                   for x in matrix_store.observation_rows(session, [r.id for r in runs])]
            if layout in ("checks", "features"):
                table = checks_table(obs, infos, "features" if layout == "features" else rows, columns)
            elif layout == "since":
                table = since_table(obs, infos, rows)
            elif layout == "summary":
                table = summary_table(obs, infos)
            else:
                table = tiers_table(obs, infos, columns, policy)
            ended = [r.ended for r in runs if r.ended]
            source = [f"results database {public_url(db)}",
                      f"{len(runs)} runs: the newest finished run of each image and host"
                      + (f" of job {job}" if job else "") + (f" started since {since}" if since else ""),
                      f"images: {', '.join(images) if images else 'all'}"]
    last = max(ended).strftime("%Y-%m-%d") if ended else "never"
    source.append(f"valorch {__version__}")
    return Document(Header("unpublished", last, tuple(source)), table, params)


def render_document(doc: Document, fmt: str) -> str:
    fmt = _choice(fmt, FORMATS, "--format")
    if fmt == "json":
        return json.dumps(doc.to_dict(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    return {"md": document_md, "rst": document_rst, "html": document_html}[fmt](doc)


@app.command("render")
def render(fmt: str = FormatOpt, layout: str = LayoutOpt, rows: str = RowsOpt, columns: str = ColumnsOpt,
           image: list[str] = ImageOpt, since: str = SinceOpt, tier_policy: Path = PolicyOpt, job: str = JobOpt,
           version: str = typer.Option(None, "--version", help="Render this published version (immutable)."),
           out_path: Path = typer.Option(None, "--out", "-o", help="Write here instead of stdout."),
           db: str = DbOption) -> None:
    """A matrix from the newest run of each image (and host), or a published version."""
    _choice(fmt, FORMATS, "--format")
    if version:
        with sessions(db)() as session:
            data = matrix_store.load(session, version)
        if data is None:
            raise InputError(f"no published matrix version '{version}'", "valorch matrix versions lists them")
        doc = Document.from_dict(data)
    else:
        doc = build_document(db, layout, rows, columns, image or [], since, tier_policy, job)
    write_output(render_document(doc, fmt), out_path)


@app.command("publish")
def publish(version: str = typer.Option(..., "--version", help="The version name, e.g. v0.3 (immutable)."),
            layout: str = LayoutOpt, rows: str = RowsOpt, columns: str = ColumnsOpt, image: list[str] = ImageOpt,
            since: str = SinceOpt, tier_policy: Path = PolicyOpt, job: str = JobOpt, db: str = DbOption,
            as_json: bool = JsonOption) -> None:
    """Store an immutable snapshot that `matrix render --version` renders again byte for byte."""
    with sessions(db)() as session:
        if any(v.version == version for v in matrix_store.versions(session)):
            raise InputError(f"matrix version '{version}' is already published; published versions are immutable",
                             "publish under a new version name")
    doc = build_document(db, layout, rows, columns, image or [], since, tier_policy, job)
    doc = doc.with_header(Header(version, doc.header.last_verified, doc.header.source))
    last = datetime.fromisoformat(doc.header.last_verified) if doc.header.last_verified != "never" else now()
    with sessions(db)() as session:
        try:
            matrix_store.publish(session, version, doc.to_dict(), now(), last)
            session.commit()
        except matrix_store.VersionExistsError:
            raise InputError(f"matrix version '{version}' is already published; published versions are immutable",
                             "publish under a new version name") from None
    cells = sum(len(r.cells) for r in doc.table.rows)
    if as_json:
        print_json({"version": version, "layout": doc.table.layout, "rows": len(doc.table.rows), "cells": cells,
                    "last_verified": doc.header.last_verified})
    else:
        out.print(f"published matrix {version}: {doc.table.layout}, {len(doc.table.rows)} rows, {cells} cells, "
                  f"last verified {doc.header.last_verified}")


@app.command("versions")
def versions(db: str = DbOption, as_json: bool = JsonOption) -> None:
    """Published matrix versions, oldest first."""
    with sessions(db)() as session:
        rows = [(v.version, v.published, v.last_verified, v.meta.get("layout", ""), len(v.cells))
                for v in matrix_store.versions(session)]
    if as_json:
        print_json([{"version": v, "published": p.isoformat(), "last_verified": lv.date().isoformat(),
                     "layout": lay, "cells": n} for v, p, lv, lay, n in rows])
        return
    table = RichTable("version", "published (UTC)", "last verified", "layout", "cells")
    for v, p, lv, lay, n in rows:
        table.add_row(v, p.strftime("%Y-%m-%d %H:%M"), lv.strftime("%Y-%m-%d"), lay, str(n))
    out.print(table)
