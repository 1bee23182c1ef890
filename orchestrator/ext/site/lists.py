"""The site's list pages and its index: runs, checks, images, recent changes, the front
page. Each takes what ext/site/service.py read and computed, and returns one page's HTML."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from orchestrator.ext.site import pages
from orchestrator.ext.site.page_data import Site, change_label, ordered, when
from orchestrator.ext.site.views import ChangeV, FlipV, RunV, slug

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
                pages.badges(ordered(r.counts)),
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
    shifts: Counter[str],
) -> str:
    """Every check with the libraries that ran it, its latest verdicts in the matrix and how
    many changes its history shows."""
    return site.list_page(
        "Checks",
        ("check", "kind", "feature", "library (what ran)", "latest verdicts", "detected changes"),
        (
            (
                pages.link(f"{slug(cid)}.html", cid, True),
                c["kind"],
                c["feature"],
                " · ".join(ran.get(cid, ())),
                pages.badges(ordered(latest_verdicts.get(cid, Counter()))),
                shifts[cid] or "",
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


def _label(x: ChangeV | FlipV) -> tuple[str, str]:
    """(badge status, words) of a change, or of a status flip: red when it broke, green when
    it was fixed."""
    if isinstance(x, FlipV):
        return ("fixed" if x.after == "pass" else "regressed"), f"{x.before} → {x.after}"
    return change_label(x)


def _row(x: ChangeV | FlipV) -> tuple[Any, ...]:
    """A change's or a flip's row, with its two runs (a flip's at the check's result)."""
    runs, at = (x.prev_run, f"#r-{slug(x.check)}") if isinstance(x, FlipV) else (x.first_run, "")
    return (
        when(x.when),
        pages.link(f"checks/{slug(x.check)}.html", x.check, True),
        x.env,
        pages.badge(*_label(x)),
        *(pages.link(f"runs/{r}.html{at}", r[:8]) for r in (runs, x.run)),
    )


def changes_page(
    site: Site, found: Sequence[ChangeV], flipped: Sequence[FlipV] = (), n_runs: int = 0
) -> str:
    """The status flips and the timing steps and drifts, newest first; says so when there
    are none."""
    return pages.render(
        "changes.html.j2",
        title="Recent changes",
        flips=flipped,
        flips_rows=pages.table_rows(_row(f) for f in flipped),
        shifts=found,
        shift_rows=pages.table_rows(_row(c) for c in found),
        n_runs=n_runs,
        **site.ctx(""),
    )


def _recent(found: Sequence[ChangeV], flipped: Sequence[FlipV] = ()) -> list[dict[str, Any]]:
    """The newest status flips and timing changes together, newest first."""
    items: list[ChangeV | FlipV] = [*found, *flipped]
    both = [(x.when, x.check, x.env, _label(x)) for x in items]
    both.sort(key=lambda x: (x[0], x[1]), reverse=True)
    return [
        {
            "when": when(at),
            "check": check,
            "slug": slug(check),
            "env": env,
            "tone": tone_,
            "label": label,
        }
        for at, check, env, (tone_, label) in both[:RECENT]
    ]


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
        "noisy": sum(1 for r in runs.values() if r.load()["noisy"]),
    }


def index_page(
    site: Site,
    figures: dict[str, Any],
    version_views: list[dict[str, Any]],
    layouts: Sequence[str],
    jobs: list[dict[str, Any]],
    found: Sequence[ChangeV],
    qualify: Sequence[tuple[str, str]],
    flipped: Sequence[FlipV] = (),
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
        changes=_recent(found, flipped),
        n_changes=len(found) + len(flipped),
        noisy=figures["noisy"],
        root="",
        built=site.built,
        qualify=[{"name": n, "slug": slug(n)} for n, _ in qualify],
        **figures.get("extra", {}),  # the known issues' summary, the suites over budget
    )
