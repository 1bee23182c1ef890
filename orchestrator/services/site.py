"""valorch site build: the whole results store as a static site.

The session is used only to read (store/site_queries.py, store/matrix_store.py);
then every page is computed and rendered without I/O and handed back one at a time
as (relative path, text), for the command to write into a fresh directory.
"""

from __future__ import annotations

import multiprocessing
import os
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy.orm import Session

from .. import __version__
from ..errors import InputError
from ..matrix.document import Document, Header
from ..matrix.layouts import CatalogImage, components_table, observed_table
from ..matrix.libraries import images_for, libraries_table
from ..matrix.model import verdict
from ..matrix.tiers import Policy
from ..regression import rule
from ..render.diff import diff_html
from ..render.site import pages
from ..store import matrix_store, site_queries, triage_queries
from . import evidence, site_steps
from .site_pages import Site, change_label, ordered, when
from .site_views import ChangeV, RunV, changes, histories, load_runs, slug

LAYOUTS = (
    "checks",
    "features",
    "seed-features",
    "since",
    "summary",
    "tiers",
    "components",
    "libraries",
)
STRICT = "\x00named-jobs"  # the matrices key of the named-jobs-only evidence (summary, tiers)
RECENT = 15
FRESH_DAYS = 7
_WORK: dict[str, Any] = {}  # what forked page workers read (set before the pool starts)


def _run_page(run_id: str) -> str:
    return _WORK["site"].run_page(_WORK["site"].runs[run_id])


def _check_page(cid: str) -> tuple[str, str | None]:
    w = _WORK
    return w["site"].check_page(
        cid, w["per_check"].get(cid, []), w["versions"], w["shifts"].get(cid, [])
    )


def _parallel(fn: Callable[[Any], Any], items: Sequence[Any], workers: int) -> Iterator[Any]:
    """fn over items, in order: in forked workers when there is enough to do (the run and
    check pages of a large store are most of a build), else here."""
    if workers <= 1 or len(items) < 64 or "fork" not in multiprocessing.get_all_start_methods():
        yield from map(fn, items)
        return
    with multiprocessing.get_context("fork").Pool(workers) as pool:
        yield from pool.imap(fn, items, chunksize=8)


def _header(ev: evidence.Evidence, stale: int, cells: int) -> Header:
    source = [
        f"{len(ev.columns)} environments (image on a host class): each cell the newest final verdict of its "
        f"check there ({ev.runs_read} runs read)",
        (
            "no named job has run here: these claims come from named jobs only (valorch run --job FILE)"
            if ev.empty
            else "ad-hoc runs only: no named job has run"
            if ev.special_used
            else "named jobs"
        ),
        f"freshness: {stale} of {cells} cells older than {FRESH_DAYS} days",
        f"valorch {__version__}",
    ]
    return Header(
        "unpublished",
        ev.newest.strftime("%Y-%m-%d") if ev.newest else "never",
        tuple(source),
        stale,
        FRESH_DAYS,
    )


def _layout(
    layout: str,
    ev: evidence.Evidence,
    catalog: Sequence[CatalogImage],
    inventories: dict[str, dict[str, tuple[str, str]]],
    all_runs: dict[str, RunV],
    built: datetime,
) -> Document:
    obs, infos = list(ev.observations), list(ev.columns)
    if layout not in ("components", "libraries"):
        table = observed_table(
            layout,
            obs,
            infos,
            "features" if layout == "since" else "checks",
            "backends" if layout == "tiers" else "images",
            Policy(),
        )
    else:
        latest: dict[str, tuple[str, dict[str, str]]] = {}
        for run in sorted(all_runs.values(), key=lambda r: (r.row["started"], r.id)):
            if run.id in inventories:
                latest[run.row["alias"]] = (
                    run.id,
                    {c: v for c, (v, _s) in inventories[run.id].items()},
                )
        if layout == "libraries":
            backends = {r.row["alias"]: r.row["backend"] for r in all_runs.values()}
            table = libraries_table(images_for(sorted(backends.items()), latest, chosen=False))
        else:
            table = components_table(catalog, latest)
        return Document(_header(ev, 0, 0), table, {"layout": layout})
    table, stale = evidence.stamp(table, built, FRESH_DAYS)
    cells = sum(1 for r in table.rows for c in r.cells if c.when)
    return Document(_header(ev, stale, cells), table, {"layout": layout})


def _cell_verdicts(ev: evidence.Evidence) -> dict[tuple[str, str], str]:
    """(check, column) → the verdict of its matrix cell (every attempt of the run that speaks for it)."""
    attempts: dict[tuple[str, str], list[str]] = {}
    for o in ev.observations:
        attempts.setdefault((o.check, o.column), []).append(o.status)
    return {key: verdict(statuses) for key, statuses in attempts.items()}


def _version_side(name: str, doc: dict[str, Any]) -> rule.Side:
    obs = []
    for r in doc["rows"]:
        for col, c in r["cells"].items():
            for i, status in enumerate(c["statuses"] or [c["verdict"]]):
                if status:
                    obs.append(
                        rule.Obs(
                            env=col, check=r["key"], status=str(status), attempt=i + 1, version=None
                        )
                    )
    return rule.Side(
        name, "matrix", tuple(obs), (), tuple(sorted((doc.get("digests") or {}).items())), ()
    )


def build(
    session: Session,
    *,
    catalog: Sequence[CatalogImage] = (),
    local: frozenset[str] = frozenset(),
    qualify: Sequence[tuple[str, str]] = (),
    built: datetime | None = None,
    workers: int | None = None,
) -> Iterator[tuple[str, str]]:
    """Every page of the site as (relative path, text). Reads the store first (an empty
    store is bad input: exit 2), then renders without touching it."""
    run_rows = site_queries.runs(session)
    if not run_rows:
        raise InputError(
            "the results database has no runs: there is nothing to publish",
            "run something first (valorch run --image host), or pass --db with the right database",
        )
    pk_checks = site_queries.checks(session)
    runs = load_runs(run_rows, pk_checks, site_queries.results(session))
    for rid, why in triage_queries.stored_all(
        session
    ).items():  # each red result says why (run pages)
        if rid in runs:
            runs[rid].row["triage"] = why
    inventories = site_queries.inventories(session)
    versions = [
        (mv, matrix_store.load(session, mv.version)) for mv in matrix_store.versions(session)
    ]
    # the matrices' evidence: each cell the newest final verdict of its check (services/evidence.py)
    matrices: dict[str | None, evidence.Evidence] = {
        None: evidence.gather(session),
        STRICT: evidence.gather(session, fallback_special=False),
    }
    for job in sorted({r["job"] for r in run_rows}):
        matrices[job] = evidence.gather(session, job=job, include_special=True)
    per_check = histories(
        runs,
        {
            c["check_id"]: bool(c["bigger_is_better"])
            for c in sorted(pk_checks.values(), key=lambda c: (c["check_id"], c["version"]))
        },
    )
    found = site_steps.confirmed(
        session, changes(per_check), per_check
    )  # only what `valorch diff` calls a change
    return _pages(
        runs,
        pk_checks,
        inventories,
        versions,
        catalog,
        local,
        qualify,
        built or datetime.now(),
        workers if workers is not None else min(4, os.cpu_count() or 1),
        matrices,
        (per_check, found),
    )


def _pages(
    runs: dict[str, RunV],
    pk_checks: dict[int, dict[str, Any]],
    inventories: dict[str, Any],
    versions: list[tuple[Any, dict[str, Any]]],
    catalog: Sequence[CatalogImage],
    local: frozenset[str],
    qualify: Sequence[tuple[str, str]],
    built: datetime,
    workers: int,
    matrices: dict[str | None, evidence.Evidence],
    timed: tuple[dict[str, list[Any]], list[ChangeV]] | None = None,
) -> Iterator[tuple[str, str]]:
    checks: dict[str, dict[str, Any]] = {}
    for c in sorted(pk_checks.values(), key=lambda c: (c["check_id"], c["version"])):
        info = checks.setdefault(c["check_id"], {**c, "versions": []})
        info["versions"].append(c["version"])
        info.update({k: c[k] for k in ("feature", "kind", "library", "unit", "bigger_is_better")})
    site = Site(runs, checks, local, built.strftime("%Y-%m-%d %H:%M"))
    per_check, found = (
        timed
        if timed is not None
        else (histories(runs, {cid: bool(c["bigger_is_better"]) for cid, c in checks.items()}), [])
    )

    # matrices: every layout of the newest evidence, each job's, the published versions
    if not matrices[None].empty:
        for layout in LAYOUTS:
            ev = matrices[STRICT] if layout in ("summary", "tiers") else matrices[None]
            yield (
                f"matrix/{layout}.html",
                site.matrix(_layout(layout, ev, catalog, inventories, runs, built)),
            )
    jobs = []
    for job in sorted({r.row["job"] for r in runs.values()}):
        ev = matrices[job]
        if ev.empty:
            continue
        yield (
            f"matrix/job-{slug(job)}.html",
            site.matrix(_layout("checks", ev, catalog, inventories, runs, built), f" — job {job}"),
        )
        # what the job's matrix says: its cells' verdicts, from the runs its cells came from
        jobs.append(
            {
                "name": job,
                "slug": slug(job),
                "runs": len({o.run_id for o in ev.observations}),
                "counts": ordered(Counter(_cell_verdicts(ev).values())),
                "newest": when(max(runs[o.run_id].row["started"] for o in ev.observations)),
            }
        )
    version_views, version_docs, prev = [], [], None
    for mv, doc in versions:
        yield f"versions/{slug(mv.version)}.html", site.matrix(Document.from_dict(doc))
        view = {
            "name": mv.version,
            "slug": slug(mv.version),
            "published": when(mv.published),
            "last_verified": mv.last_verified.strftime("%Y-%m-%d"),
            "layout": doc.get("layout", ""),
            "prev": prev[0] if prev else "",
            "diff": "",
        }
        if prev is not None and doc.get("layout") == prev[1].get("layout"):
            view["diff"] = f"{slug(prev[0])}..{slug(mv.version)}"
            report = rule.compare(_version_side(prev[0], prev[1]), _version_side(mv.version, doc))
            yield f"diffs/{view['diff']}.html", diff_html(report)
        version_views.append(view)
        version_docs.append((mv.version, doc))
        prev = (mv.version, doc)

    # one page per run, per check (and its plot), per image
    shifts_of: dict[str, list[ChangeV]] = {}
    for c in found:
        shifts_of.setdefault(c.check, []).append(c)
    _WORK.update(site=site, per_check=per_check, versions=version_docs, shifts=shifts_of)
    try:
        run_ids = list(runs)
        for rid, html in zip(run_ids, _parallel(_run_page, run_ids, workers)):
            yield f"runs/{rid}.html", html
        cids = sorted(checks)
        for cid, (html, svg) in zip(cids, _parallel(_check_page, cids, workers)):
            yield f"checks/{slug(cid)}.html", html
            if svg:
                yield f"plots/{slug(cid)}.svg", svg
    finally:
        _WORK.clear()
    by_image: dict[str, list[RunV]] = {}
    for run in runs.values():
        by_image.setdefault(run.row["alias"], []).append(run)
    for alias, image_runs in sorted(by_image.items()):
        yield f"images/{slug(alias)}.html", site.image_page(alias, image_runs, inventories)
    for name, html in qualify:
        yield f"qualify/{slug(name)}.html", html

    # lists, recent changes, the index
    ordered_runs = sorted(runs.values(), key=lambda r: (r.row["started"], r.id), reverse=True)
    yield (
        "runs/index.html",
        site.list_page(
            "Runs",
            ("run", "started", "image", "host", "job", "state", "verdicts", "host load"),
            (
                (
                    pages.link(f"{r.id}.html", r.id[:8], True),
                    when(r.row["started"]),
                    pages.link(f"../images/{slug(r.row['alias'])}.html", r.row["alias"]),
                    r.row["host"],
                    r.row["job"],
                    r.row["state"],
                    pages.badges(ordered(r.counts())),
                    pages.badge("noisy host") if r.load()["noisy"] else "",
                )
                for r in ordered_runs
            ),
        ),
    )
    latest_verdicts: dict[str, Counter] = {}
    ran: dict[
        str, dict[str, None]
    ] = {}  # check → the libraries evidence named in the matrix's cells
    for o in matrices[None].observations:
        if o.library:
            ran.setdefault(o.check, {})[o.library] = None
    for (check, _column), v in _cell_verdicts(matrices[None]).items():
        latest_verdicts.setdefault(check, Counter())[v] += 1
    yield (
        "checks/index.html",
        site.list_page(
            "Checks",
            (
                "check",
                "kind",
                "feature",
                "library (what ran)",
                "latest verdicts",
                "detected changes",
            ),
            (
                (
                    pages.link(f"{slug(cid)}.html", cid, True),
                    c["kind"],
                    c["feature"],
                    " · ".join(ran.get(cid, ())),
                    pages.badges(ordered(latest_verdicts.get(cid, Counter()))),
                    len(shifts_of.get(cid, [])) or "",
                )
                for cid, c in sorted(checks.items())
            ),
        ),
    )
    yield (
        "images/index.html",
        site.list_page(
            "Images",
            ("image", "reference", "backend", "runs", "digests", "newest run"),
            (
                (
                    pages.link(f"{slug(a)}.html", a),
                    rs[0].row["reference"],
                    rs[0].row["backend"],
                    len(rs),
                    len({r.row["digest"] for r in rs}),
                    when(max(r.row["started"] for r in rs)),
                )
                for a, rs in sorted(by_image.items())
            ),
        ),
    )

    def change_row(c: ChangeV, root: str) -> tuple:
        tone_, label = change_label(c)
        return (
            when(c.when),
            pages.link(f"{root}checks/{slug(c.check)}.html", c.check, True),
            c.env,
            pages.badge(tone_, label),
            pages.link(f"{root}runs/{c.first_run}.html", c.first_run[:8]),
            pages.link(f"{root}runs/{c.run}.html", c.run[:8]),
        )

    yield (
        "changes.html",
        site.list_page(
            "Recent changes",
            ("detected", "check", "environment", "change", "from run", "passed the threshold at"),
            (change_row(c, "") for c in found),
            intro="Steps and drifts in the timed checks' histories (PELT on log medians; each level compared with the "
            "best since the last change, so sub-threshold steps add up). Newest first.",
            root="",
        ),
    )
    recent = []
    for c in found[:RECENT]:
        tone_, label = change_label(c)
        recent.append(
            {
                "when": when(c.when),
                "check": c.check,
                "slug": slug(c.check),
                "env": c.env,
                "tone": tone_,
                "label": label,
            }
        )
    stats = {
        "runs": len(runs),
        "images": len(by_image),
        "hosts": len({r.row["host"] for r in runs.values()}),
        "checks": len(checks),
        "results": sum(len(r.results) for r in runs.values()),
        "newest": when(ordered_runs[0].row["started"]),
    }
    yield (
        "index.html",
        pages.render(
            "index.html.j2",
            title="valorch results",
            stats=stats,
            versions=list(reversed(version_views)),
            layouts=LAYOUTS if not matrices[None].empty else (),
            jobs=jobs,
            changes=recent,
            n_changes=len(found),
            noisy=sum(1 for r in runs.values() if r.load()["noisy"]),
            root="",
            built=site.built,
            qualify=[{"name": n, "slug": slug(n)} for n, _ in qualify],
        ),
    )
