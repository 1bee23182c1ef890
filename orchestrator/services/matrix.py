"""Build, render and publish matrix documents from stored results (and published versions)."""

from __future__ import annotations

import fnmatch
import json
import re
from datetime import datetime
from pathlib import Path
from typing import Any, Callable, Sequence

from sqlalchemy.orm import Session, sessionmaker

from .. import __version__, yamlio
from ..catalog.core import Catalog
from ..errors import InputError
from ..matrix.document import Document, Header
from ..matrix.layouts import COLUMNS, LAYOUTS, ROWS, CatalogImage, RunInfo
from ..matrix.layouts import checks_table, components_table, since_table, summary_table, tiers_table
from ..matrix.status_filter import rows_with
from ..matrix.tiers import Policy
from ..render.html import document_html
from ..render.markdown import document_md
from ..render.rst import document_rst
from ..store import matrix_store
from ..store.db import public_url
from ..store.queries import now
from ..spec import VERSION_PATTERN
from .views import observation

Factory = sessionmaker[Session]
FORMATS = ("md", "rst", "html", "json")
DEFAULT_ROWS = {"checks": "checks", "features": "features", "since": "features", "summary": "features",
                "tiers": "checks", "components": "checks"}


def choice(value: str, allowed: tuple[str, ...], flag: str) -> str:
    if value not in allowed:
        raise InputError(f"unknown {flag} '{value}'", f"use one of: {', '.join(allowed)}")
    return value


def _policy(path: Path | None) -> Policy:
    if path is None:
        return Policy()
    doc = yamlio.load(path)  # UTF-8, YAML syntax, duplicate keys: errors name the file and line
    try:
        return Policy.from_mapping(doc.data)
    except (TypeError, ValueError) as exc:
        raise InputError(f"{path}: {exc}", "keys: first_class_min_pass, first_class_max_crashes, "
                         "best_effort_min_pass, experimental_min_pass") from None


def _when(moment: datetime | None) -> str | None:
    """--since as the user wrote it: a date, or a date and time to the minute (or second)."""
    if moment is None:
        return None
    if moment.time() == datetime.min.time():
        return moment.strftime("%Y-%m-%d")
    return moment.isoformat(timespec="minutes" if not moment.second and not moment.microsecond else "seconds")


def build_document(factory: Factory, db: str | None, catalog: Callable[[], Catalog], layout: str, rows: str | None,
                   columns: str | None, images: Sequence[str], since_dt: datetime | None,
                   policy_path: Path | None, job: str | None = None) -> Document:
    """An unpublished document from the newest finished run of each image and host (the
    components layout: from the catalog and the stored inventories). ``db`` is the --db value
    the document names as its source; ``catalog`` loads the image catalog (read by the
    components layout only)."""
    layout = choice(layout, LAYOUTS, "--layout")
    rows = choice(rows or DEFAULT_ROWS[layout], ROWS, "--rows")
    columns = choice(columns or ("backends" if layout == "tiers" else "images"), COLUMNS, "--columns")
    policy, since = _policy(policy_path), _when(since_dt)
    images = list(images)
    params = {"layout": layout, "rows": rows, "columns": columns, "images": images, "since": since}
    if job:
        params["job"] = job
    with factory() as session:
        if layout == "components":
            entries = [i for i in catalog().images
                       if not images or any(fnmatch.fnmatchcase(i.alias, s) for s in images)]
            inventory = matrix_store.newest_components_by_image(session)
            table = components_table([CatalogImage(i.alias, i.reference, i.digest, dict(i.components))
                                      for i in entries], inventory)
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
            obs = [observation(x, x.run_id) for x in matrix_store.observation_rows(session, [r.id for r in runs])]
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


def published(factory: Factory, version: str) -> Document:
    """A published version's document, as it was published."""
    with factory() as session:
        data = matrix_store.load(session, version)
    if data is None:
        raise InputError(f"no published matrix version '{version}'", "valorch matrix versions lists them")
    return Document.from_dict(data)


def render_document(doc: Document, fmt: str, statuses: tuple[str, ...] = ()) -> str:
    """``doc`` in ``fmt``; with ``statuses``, only the rows having a cell in one of them."""
    fmt = choice(fmt, FORMATS, "--format")
    doc = rows_with(doc, statuses)
    if fmt == "json":
        return json.dumps(doc.to_dict(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    return {"md": document_md, "rst": document_rst, "html": document_html}[fmt](doc)


def _exists(version: str) -> InputError:
    return InputError(f"matrix version '{version}' is already published; published versions are immutable",
                      "publish under a new version name")


def publish(factory: Factory, db: str | None, catalog: Callable[[], Catalog], version: str, layout: str, rows: str | None,
            columns: str | None, images: Sequence[str], since: datetime | None,
            policy_path: Path | None, job: str | None = None) -> dict[str, Any]:
    """Build a document and store it as an immutable version; what was published."""
    if not re.fullmatch(VERSION_PATTERN, version):
        raise InputError(f"matrix version {version!r} is not a version name",
                         "1 to 64 characters from A-Z a-z 0-9 . _ - (e.g. v0.3)")
    with factory() as session:
        if any(v.version == version for v in matrix_store.versions(session)):
            raise _exists(version)
    doc = build_document(factory, db, catalog, layout, rows, columns, images, since, policy_path, job)
    doc = doc.with_header(Header(version, doc.header.last_verified, doc.header.source))
    last = datetime.fromisoformat(doc.header.last_verified) if doc.header.last_verified != "never" else now()
    with factory() as session:
        try:
            matrix_store.publish(session, version, doc.to_dict(), now(), last)
            session.commit()
        except matrix_store.VersionExistsError:
            raise _exists(version) from None
    return {"version": version, "layout": doc.table.layout, "rows": len(doc.table.rows),
            "cells": sum(len(r.cells) for r in doc.table.rows), "last_verified": doc.header.last_verified}


def versions(factory: Factory) -> list[dict[str, Any]]:
    """Published versions, oldest first: version, published, last_verified (datetimes), layout, cells."""
    with factory() as session:
        return [{"version": v.version, "published": v.published, "last_verified": v.last_verified,
                 "layout": v.meta.get("layout", ""), "cells": len(v.cells)} for v in matrix_store.versions(session)]
