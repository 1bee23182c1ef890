"""The site's list pages and its index: runs, checks, images, recent changes, the front
page. Each takes what services/site.py read and computed, and returns one page's HTML."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from ..render.site import pages
from .site_pages import Site, change_label, ordered, when
from .site_views import ChangeV, RunV, slug

RECENT = 15  # changes on the front page


def runs_page(site: Site, ordered_runs: Sequence[RunV]) -> str:
    """Every run, newest first, with its verdicts and whether the host was busy."""
    return site.list_page(
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
    )


def checks_page(
    site: Site,
    checks: dict[str, dict[str, Any]],
    ran: dict[str, dict[str, None]],
    latest_verdicts: dict[str, Counter[str]],
    shifts_of: dict[str, list[ChangeV]],
) -> str:
    """Every check with the libraries that ran it, its latest verdicts in the matrix and how
    many changes its history shows."""
    return site.list_page(
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
    )


def images_page(site: Site, by_image: dict[str, list[RunV]]) -> str:
    """Every image with its reference, backend, runs, digests seen and newest run."""
    return site.list_page(
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
    )


def _change_row(c: ChangeV, root: str) -> tuple[str, str, str, str, str, str]:
    tone_, label = change_label(c)
    return (
        when(c.when),
        pages.link(f"{root}checks/{slug(c.check)}.html", c.check, True),
        c.env,
        pages.badge(tone_, label),
        pages.link(f"{root}runs/{c.first_run}.html", c.first_run[:8]),
        pages.link(f"{root}runs/{c.run}.html", c.run[:8]),
    )


def changes_page(site: Site, found: Sequence[ChangeV]) -> str:
    """The steps and drifts the timed checks' histories show, newest first."""
    return site.list_page(
        "Recent changes",
        ("detected", "check", "environment", "change", "from run", "passed the threshold at"),
        (_change_row(c, "") for c in found),
        intro="Steps and drifts in the timed checks' histories (PELT on log medians; each level compared with the "
        "best since the last change, so sub-threshold steps add up). Newest first.",
        root="",
    )


def _recent(found: Sequence[ChangeV]) -> list[dict[str, Any]]:
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
    return recent


def stats(
    runs: dict[str, RunV], by_image: dict[str, list[RunV]], checks: dict[str, Any]
) -> dict[str, Any]:
    """The store in figures: runs, images, hosts, checks, results and the newest run."""
    newest = max(runs.values(), key=lambda r: (r.row["started"], r.id))
    return {
        "runs": len(runs),
        "images": len(by_image),
        "hosts": len({r.row["host"] for r in runs.values()}),
        "checks": len(checks),
        "results": sum(len(r.results) for r in runs.values()),
        "newest": when(newest.row["started"]),
    }


def index_page(
    site: Site,
    runs: dict[str, RunV],
    figures: dict[str, Any],
    version_views: list[dict[str, Any]],
    layouts: Sequence[str],
    jobs: list[dict[str, Any]],
    found: Sequence[ChangeV],
    qualify: Sequence[tuple[str, str]],
) -> str:
    """The front page: the figures, the published versions (newest first), the matrices,
    each job's matrix, the recent changes and the qualification reports."""
    return pages.render(
        "index.html.j2",
        title="valorch results",
        stats=figures,
        versions=list(reversed(version_views)),
        layouts=layouts,
        jobs=jobs,
        changes=_recent(found),
        n_changes=len(found),
        noisy=sum(1 for r in runs.values() if r.load()["noisy"]),
        root="",
        built=site.built,
        qualify=[{"name": n, "slug": slug(n)} for n, _ in qualify],
    )
