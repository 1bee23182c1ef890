"""Build, render and publish matrix documents from stored results (and published versions)."""

from __future__ import annotations

import fnmatch
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import __version__
from ..errors import InputError
from ..matrix.document import Document, Header, Table, freshness, rows_with
from ..matrix.layouts import COLUMNS, ROWS, CatalogImage, components_table, observed_table
from ..matrix.layouts import (
    LAYOUTS as LAYOUTS,  # re-exported: the command names the choices
)
from ..matrix.libraries import images_for, libraries_table
from ..matrix.tiers import Policy
from ..render.markdown import document_md
from ..render.rst import document_rst
from ..store import matrix_store
from ..store.db import public_url
from ..store.queries import now
from ..words import count
from . import evidence
from .accept import joined
from .session import engine_of

if TYPE_CHECKING:  # the matrix is read with Core; the ORM loads only to publish
    from sqlalchemy.engine import Connection
    from sqlalchemy.orm import Session, sessionmaker

    from ..catalog.core import Catalog
    from .session import Deferred

    Factory = sessionmaker[Session] | Deferred
FORMATS = ("md", "rst", "html", "json")
DEFAULT_FRESH_DAYS = 7
FEATURE_ROWS = ("features", "since", "summary", "seed-features")  # by default; others: checks


def choice(value: str, allowed: tuple[str, ...], flag: str) -> str:
    if value not in allowed:
        raise InputError(f"unknown {flag} '{value}'", f"use one of: {', '.join(allowed)}")
    return value


def _policy(path: Path | None) -> Policy:
    if path is None:
        return Policy()
    from .. import yamlio

    # UTF-8, YAML syntax, duplicate keys: errors name the file and line
    doc = yamlio.load(path, "matrix document")
    try:
        return Policy.from_mapping(doc.data)
    except (TypeError, ValueError) as exc:
        raise InputError(
            f"{path}: {exc}",
            "keys: first_class_min_pass, first_class_max_crashes, "
            "best_effort_min_pass, experimental_min_pass",
        ) from None


def _when(moment: datetime | None) -> str | None:
    """--since as the user wrote it: a date, or a date and time to the minute (or second)."""
    if moment is None:
        return None
    if moment.time() == datetime.min.time():
        return moment.strftime("%Y-%m-%d")
    return moment.isoformat(
        timespec="minutes" if not moment.second and not moment.microsecond else "seconds"
    )


def _matches(alias: str, images: Sequence[str]) -> bool:
    """``alias`` is one of those the --image globs name (every alias when none is given)."""
    return not images or any(fnmatch.fnmatchcase(alias, s) for s in images)


STRICT_LAYOUTS = ("summary", "tiers")  # claims about a backend: named jobs only, never a fallback


def _inventory_layout(
    session: Connection,
    db: str | None,
    catalog: Callable[[], Catalog],
    layout: str,
    images: list[str],
    releases_path: Path | None = None,
    job: str | None = None,
) -> tuple[Table, list[datetime], list[str]]:
    """The components or libraries layout: the catalog's images (those ``images`` match, and
    with ``job`` those its stored runs ran, each shown even where no inventory was taken) and
    their newest stored inventories; when the inventories were taken; the document's source."""
    if job:
        ran = matrix_store.aliases_of_job(session, job)
        if not ran:
            raise InputError(
                f"--job {job}: no stored run of that job",
                "valorch results list --job NAME shows the jobs that ran; or drop --job",
            )
        chosen = [a for a in ran if _matches(a, images)]
        if not chosen:
            raise InputError(
                f"--image {', '.join(images)} matches none of the images job {job} ran "
                f"({', '.join(ran)})",
                "drop --image, or name one of those",
            )
        images = chosen  # the job's images, narrowed by --image
    entries = [i for i in catalog().images if _matches(i.alias, images)]
    if job:  # the job's order (its images' first runs), as the checks layout keeps it
        entries.sort(key=lambda i: images.index(i.alias))
    inventory = matrix_store.newest_components_by_image(session)
    if layout == "libraries":
        inventory = {a: v for a, v in inventory.items() if _matches(a, images)}
        from ..catalog import releases
        from .catalog import load_releases

        rocm = load_releases(releases_path).get("rocm") if releases_path else None
        published = {
            a: releases.published_versions(rocm, comps)
            for a, (_, comps) in inventory.items()
            if rocm
        }
        table = libraries_table(
            images_for([(i.alias, i.backend) for i in entries], inventory, bool(images)), published
        )
    else:
        by_digest = matrix_store.newest_components_by_digest(session)
        table = components_table(
            [CatalogImage(i.alias, i.reference, i.digest, dict(i.components)) for i in entries],
            inventory,
            by_digest,
            matrix_store.broken_imports(session),
        )
        inventory = {  # the inventory runs the table used (for their dates)
            **{e.alias: by_digest[e.reference] for e in entries if e.reference in by_digest},
            **{e.alias: by_digest[e.digest] for e in entries if e.digest in by_digest},
            **inventory,
        }
    used = sorted(run_id for run_id, _ in inventory.values())
    source = [
        "the image catalog (images/*.yaml)",
        f"inventory runs in {public_url(db)}: {len(used)}",
    ]
    return table, matrix_store.ended_of(session, used), source


@dataclass(frozen=True)
class MatrixQuery:
    """What a matrix shows: the flags of ``matrix render`` and ``publish``."""

    layout: str = "checks"
    rows: str | None = None
    columns: str | None = None
    images: tuple[str, ...] = ()
    since: datetime | None = None
    policy_path: Path | None = None
    job: str | None = None
    include_adhoc: bool = False
    fresh_days: int = DEFAULT_FRESH_DAYS
    releases: Path | None = None  # a release table: the libraries layout shows its versions
    known_issues: Path | None = None  # failures it excuses show as ⚑ waived (so do the store's)


def build_document(
    factory: Factory,
    db: str | None,
    catalog: Callable[[], Catalog],
    query: MatrixQuery,
    *,
    strict: bool = False,
) -> Document:
    """An unpublished document. Each cell is the newest final verdict of its check in its
    environment (image on a host class: services/evidence.py), dated; cells older than
    ``fresh_days`` are marked stale. The components layout reads the catalog and the stored
    inventories. ``db`` is the --db value the document names as its source; ``catalog``
    loads the image catalog (read by the components layout only). ``strict`` (publishing):
    named jobs only unless ``include_adhoc``, as for the summary and tiers layouts."""
    images, since_dt, job = list(query.images), query.since, query.job
    include_adhoc = query.include_adhoc
    layout = choice(query.layout, LAYOUTS, "--layout")
    default_rows = "features" if layout in FEATURE_ROWS else "checks"
    rows = choice(query.rows or default_rows, ROWS, "--rows")
    columns = query.columns or ("backends" if layout == "tiers" else "images")
    columns = choice(columns, COLUMNS, "--columns")
    fresh_days = fresh_window(query.fresh_days)
    policy, since = _policy(query.policy_path), _when(since_dt)
    issues = None
    if query.known_issues is not None:
        from ..regression import known_issues as ki

        issues = ki.load(query.known_issues)
    params: dict[str, Any] = {
        "layout": layout,
        "rows": rows,
        "columns": columns,
        "images": images,
        "since": since,
    }
    given = {"job": job, "include_adhoc": include_adhoc, "known_issues": query.known_issues}
    params.update({k: v if v is True else str(v) for k, v in given.items() if v})
    stale = 0
    with engine_of(factory).connect() as session:
        if layout in ("components", "libraries"):
            table, ended, source = _inventory_layout(
                session, db, catalog, layout, images, query.releases, job
            )
        else:
            strict = strict or layout in STRICT_LAYOUTS
            ev = evidence.gather(
                session,
                images,
                since_dt,
                job,
                include_special=include_adhoc,
                fallback_special=not strict,
            )
            if ev.empty:
                raise InputError(
                    _nothing(job, images, since, strict and not include_adhoc),
                    "run something first: valorch run --job jobs/smoke.yaml"
                    + (
                        "; ad-hoc, bisect and --cpu-only runs count with --include-adhoc"
                        if strict and not include_adhoc
                        else ""
                    ),
                )
            infos = list(ev.columns)
            # the file's waivers and the store's, as qualify's (the inventory layouts use none)
            obs = evidence.excuse(ev.observations, infos, joined(session, issues))
            table = observed_table(layout, obs, infos, rows, columns, policy)
            table, stale = evidence.stamp(table, now(), fresh_days)
            ended = [ev.newest] if ev.newest else []
            cells = sum(1 for r in table.rows for c in r.cells if c.when)
            source = [
                f"results database {public_url(db)}",
                f"{count(len(infos), 'environment')} (image on a host class); each cell is the "
                f"newest final verdict of its check there ({count(ev.runs_read, 'run')} read)"
                + (
                    f", job {job}"
                    if job
                    else (", ad-hoc runs" if ev.special_used else ", named jobs")
                )
                + (f", runs started since {since}" if since else ""),
                _special_line(ev, include_adhoc),
                freshness(stale, cells, fresh_days) + " (--fresh-days)",
                f"images: {', '.join(images) if images else 'all'}",
            ]
    last = max(ended).strftime("%Y-%m-%d") if ended else "never"
    source.append(f"valorch {__version__}")
    return Document(
        Header("unpublished", last, tuple(s for s in source if s), stale, fresh_days), table, params
    )


def fresh_window(days: int) -> int:
    if not isinstance(days, int) or isinstance(days, bool) or days < 1 or days > 36500:
        raise InputError(
            f"--fresh-days {days!r}: the freshness window must be a whole number of days, 1 or more",
            f"for example --fresh-days {DEFAULT_FRESH_DAYS} (the default)",
        )
    return days


def _special_line(ev: evidence.Evidence, asked: bool) -> str:
    if asked:
        return "ad-hoc, bisect and --cpu-only runs included (--include-adhoc)"
    if ev.special_used:
        return "ad-hoc runs only: no named job has run here (valorch run --job FILE names one)"
    if ev.special_left_out:
        return f"{ev.special_left_out} ad-hoc, bisect or --cpu-only runs left out (--include-adhoc shows them)"
    return ""


def _nothing(job: str | None, images: Sequence[str], since: str | None, named_only: bool) -> str:
    return (
        "no finished runs"
        + (" of a named job" if named_only and not job else "")
        + " in the results database"
        + (f" of job {job}" if job else "")
        + (f" for {', '.join(images)}" if images else "")
        + (f" since {since}" if since else "")
    )


def published(factory: Factory, version: str) -> Document:
    with engine_of(factory).connect() as session:
        data = matrix_store.load(session, version)
    if data is None:
        raise InputError(
            f"no published matrix version '{version}'", "valorch matrix versions lists them"
        )
    return Document.from_dict(data)


def check_fragment(fmt: str, fragment: bool) -> None:
    """--fragment is a table without its page: md, rst and html have one, json has none."""
    if fragment and fmt == "json":
        raise InputError(
            "--fragment does not apply to --format json (a JSON document has no page around "
            "its table)",
            "drop --fragment, or use --format md, rst or html",
        )


def render_document(
    doc: Document, fmt: str, fragment: bool = False, statuses: tuple[str, ...] = ()
) -> str:
    """``doc`` in ``fmt``; ``fragment``: the table without page title or header, to include in a
    page (not json); with ``statuses``, only the rows having a cell in one of them."""
    fmt = choice(fmt, FORMATS, "--format")
    check_fragment(fmt, fragment)
    doc = rows_with(doc, statuses)
    if fmt == "json":
        return json.dumps(doc.to_dict(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    if fmt == "html":  # jinja2 (its templates): loaded only for the page that needs it
        from ..render.html import document_html

        return document_html(doc, fragment)
    return {"md": document_md, "rst": document_rst}[fmt](doc, fragment)


def _exists(version: str) -> InputError:
    return InputError(
        f"matrix version '{version}' is already published; published versions are immutable",
        "publish under a new version name",
    )


def publish(
    factory: Factory,
    db: str | None,
    catalog: Callable[[], Catalog],
    version: str,
    query: MatrixQuery,
) -> dict[str, Any]:
    """Build a document and store it as an immutable version (named jobs only, unless
    ``include_adhoc``); what was published."""
    from ..spec import VERSION_PATTERN

    if not re.fullmatch(VERSION_PATTERN, version):
        raise InputError(
            f"matrix version {version!r} is not a version name",
            "1 to 64 characters from A-Z a-z 0-9 . _ - (e.g. v0.3)",
        )
    with engine_of(factory).connect() as conn:
        if any(v.version == version for v in matrix_store.versions(conn)):
            raise _exists(version)
    doc = build_document(factory, db, catalog, query, strict=True)
    doc = doc.with_header(replace(doc.header, version=version))
    last = (
        datetime.fromisoformat(doc.header.last_verified)
        if doc.header.last_verified != "never"
        else now()
    )
    with factory() as session:
        try:
            matrix_store.publish(session, version, doc.to_dict(), now(), last)
            session.commit()
        except matrix_store.VersionExistsError:
            raise _exists(version) from None
    return {
        "version": version,
        "layout": doc.table.layout,
        "rows": len(doc.table.rows),
        "cells": sum(len(r.cells) for r in doc.table.rows),
        "last_verified": doc.header.last_verified,
    }


def versions(factory: Factory) -> list[dict[str, Any]]:
    """Published versions, oldest first: version, published, last_verified (datetimes), layout, cells."""
    with engine_of(factory).connect() as conn:
        return [
            {
                "version": v.version,
                "published": v.published,
                "last_verified": v.last_verified,
                "layout": v.meta.get("layout", ""),
                "cells": v.n,
            }
            for v in matrix_store.versions(conn)
        ]
