"""One page at a time: view data (ext/site/views.py) → the renderers of
ext/site/. Pure; ext/site/service.py drives it."""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from orchestrator.ext.site import pages, plots
from orchestrator.ext.site import trend as site_trend
from orchestrator.ext.site.views import BAD, ChangeV, History, RunV, inventory_diff, repro, slug
from orchestrator.matrix.document import Document, Table
from orchestrator.render.diff import pct
from orchestrator.render.sections import sectioned, shown_label_headers, shown_labels
from orchestrator.store.queries import provenance

STRIP = 60  # runs shown per environment in a check's status strip
VERDICT_ORDER = (
    "pass",
    "fail",
    "crash",
    "timeout",
    "unsupported",
    "partial",
    "error",
    "flaky",
    "xfail",
    "skip",
    "n/a",
    "missing",
)


# where a result goes on its run page: failures first, then the inconclusive (any other
# string too), then the rest
_ATTENTION = {
    v: 0 if v in BAD else 2 if v in ("pass", "skip", "missing") else 1
    for v in (*VERDICT_ORDER, *BAD)
}


def when(dt: datetime | None) -> str:
    return dt.strftime("%Y-%m-%d %H:%M") if dt else "—"


def ordered(counts: Counter[str]) -> list[tuple[str, int]]:
    return sorted(
        counts.items(),
        key=lambda kv: (VERDICT_ORDER.index(kv[0]) if kv[0] in VERDICT_ORDER else 99, kv[0]),
    )


def change_label(c: ChangeV) -> tuple[str, str]:
    what = "step" if c.kind == "step" else f"drift over {c.steps} steps"
    return c.direction, f"{c.direction} {pct(c.ratio)} ({what})"


class Site:
    """What every page needs to link to: runs, their results, the catalog's local images."""

    def __init__(
        self,
        runs: dict[str, RunV],
        checks: dict[str, dict[str, Any]],
        local: frozenset[str],
        built: str,
    ) -> None:
        self.runs, self.checks, self.local, self.built = runs, checks, local, built
        self.in_order = sorted(runs.values(), key=lambda r: (r.row["started"], r.id))
        self.by_feature: dict[str, list[str]] = {}
        for cid, c in checks.items():
            self.by_feature.setdefault(c["feature"] or cid, []).append(cid)

    @functools.cached_property
    def suite_of(self) -> dict[str, str]:
        """check id → the suite of its result in the last run that has it."""
        return {res.check: res.suite for run in self.runs.values() for res in run.results.values()}

    def ctx(self, root: str = "../", stamped: bool = True) -> dict[str, Any]:
        """What every page's frame needs. The build's time only on the pages made on every
        build (``stamped``): a run's, a check's or an image's page says only what it is
        made from, so an unchanged one is kept as it is (service.Page)."""
        return {"root": root, "built": self.built if stamped else ""}

    def repros(self, run_ids: Sequence[str], row_key: str) -> list[str]:
        """Repro commands for the failing checks behind a matrix cell (a check, or a feature's checks)."""
        out = []
        wanted = [row_key] if row_key in self.checks else self.by_feature.get(row_key, [])
        for rid in run_ids[:3]:
            run = self.runs.get(rid)
            if run is None:
                continue
            for cid in wanted:
                res = run.results.get(cid)
                if res is not None and res.verdict in BAD:
                    out.append(repro(run, res, run.row["alias"] in self.local))
        return out[:4]

    # --- matrices -------------------------------------------------------------------------------
    def matrix(self, doc: Document, title_extra: str = "") -> str:
        t: Table = doc.table
        backends = {r.row["alias"]: r.row["backend"] for r in self.runs.values()}
        backends.update({r.row["backend"]: r.row["backend"] for r in self.runs.values()})
        families, leaves = pages.column_groups(t.columns)
        columns = [{**leaf, "backend": backends.get(leaf["name"], "")} for leaf in leaves]
        suite_of = self.suite_of
        rows, statuses = [], set()
        for r in t.rows:
            key = r.key
            suite = suite_of.get(key) or next(
                (suite_of[c] for c in self.by_feature.get(key, []) if c in suite_of), ""
            )
            anchor = f"#r-{slug(key)}" if key in self.checks else ""
            cells = []
            for head, c in zip(t.columns, r.cells, strict=False):
                statuses.add(c.verdict)
                link = (
                    f"../runs/{c.runs[0]}.html{anchor}" if c.runs and c.runs[0] in self.runs else ""
                )
                failed = c.verdict in BAD and not head.startswith("Since")
                cells.append((c, link, self.repros(c.runs, key) if failed else []))
            section = r.labels[0] if sectioned(t) else ""
            rows.append((key, suite, shown_labels(t, r), section, cells))
        title = t.title + title_extra
        return pages.render(
            "matrix.html.j2",
            title=title,
            table=t,
            header=doc.header,
            columns=columns,
            families=families,
            label_headers=shown_label_headers(t),
            body=pages.matrix_body(rows, t.literal_labels > 0),
            backends=sorted({c["backend"] for c in columns if c["backend"]}),
            suites=sorted({suite for _key, suite, *_ in rows if suite}),
            statuses=[s for s in VERDICT_ORDER if s in statuses]
            + sorted(statuses - set(VERDICT_ORDER)),
            **self.ctx(),
        )

    # --- a run -------------------------------------------------------------------------------------
    def run_page(self, run: RunV) -> str:
        row = run.row
        local = row["alias"] in self.local
        triage = row.get("triage") or {}
        # each result's verdict once (the order and the rows ask for it); the check ids of a
        # run are distinct, so the sort never compares past them
        ranked = sorted(
            (_ATTENTION.get(r.verdict, 1), r.suite, r.check, r, r.verdict)
            for r in run.results.values()
        )
        results = [
            (res, v, _links(res.check), [repro(run, res, local)] if v in BAD else [], triage)
            for _rank, _suite, _check, res, v in ranked
        ]
        meta = row["meta"] or {}
        digests = [("digest", row["digest"] or "unknown")]
        for key in ("index_digest", "platform_digest"):
            value = meta.get(key) or (meta.get("image") or {}).get(key)
            if value:
                digests.append((key.replace("_", " "), value))
        gpus = ", ".join(
            f"{g.get('vendor', '')} {g.get('arch', '')} #{g.get('index', '')}"
            + (f" {g['product']}" if g.get("product") else "")
            for g in (row["host_spec"] or {}).get("gpus", [])
        )
        nodes = [
            dict(n, suite=suite)
            for suite, m in sorted(meta.items())
            if isinstance(m, dict)
            for n in ((m.get("probe") or {}).get("nodes") or [])
            if isinstance(n, dict)
        ]  # a multi-node task's
        counts = ordered(run.counts)
        return pages.render(
            "run.html.j2",
            title=f"run {run.id[:8]}",
            run=row,
            provenance=provenance(row.get("origin")),
            image_slug=slug(row["alias"]),
            digests=digests,
            gpus=gpus,
            nodes=nodes,
            load=run.load(),
            counts=counts,
            n_results=len(results),
            n_first=sum(1 for first, *_ in ranked if first == 0),
            verdicts=[s for s, _n in counts],
            rows=pages.result_rows(results),
            **self.ctx(stamped=False),
        )

    # --- a check -----------------------------------------------------------------------------------
    def check_page(
        self,
        cid: str,
        hist: list[History],
        versions: list[tuple[str, dict[str, Any]]],
        shifts: list[ChangeV],
    ) -> tuple[str, str | None]:
        """The page, and the SVG of its trend plot (None for a check that is not timed)."""
        envs, truncated, evidenced = _env_strips(self.in_order, cid)
        svg = _trend(cid, hist) if hist else None
        rows_v, cols = version_cells(cid, versions)
        html = pages.render(
            "check.html.j2",
            title=cid,
            check={**self.checks[cid], "id": cid},
            plot=f"{slug(cid)}.svg" if svg else None,
            threshold=f"{hist[0].threshold * 100:g} %" if hist else "",
            shifts=[_shift_row(c) for c in shifts],
            decisions=site_trend.decisions(hist),
            envs=envs,
            truncated=truncated,
            limit=STRIP,
            anchor=f"r-{slug(cid)}",
            versions=rows_v,
            version_cols=cols,
            libraries=evidenced,
            **self.ctx(stamped=False),
        )
        return html, svg

    # --- an image ------------------------------------------------------------------------------------
    def image_page(
        self, alias: str, runs: list[RunV], inventories: dict[str, dict[str, tuple[str, str]]]
    ) -> str:
        runs = sorted(runs, key=lambda r: (r.row["started"], r.id))
        digests: dict[str | None, dict[str, Any]] = {}
        for r in runs:
            d = digests.setdefault(
                r.row["digest"],
                {"digest": r.row["digest"], "first": when(r.row["started"]), "runs": 0},
            )
            d["last"], d["runs"] = when(r.row["started"]), d["runs"] + 1
        inv_runs = [r for r in runs if r.id in inventories]
        inventory, inv_run, inv_diff, prev_digest, cur_digest = [], "", None, "", ""
        if inv_runs:
            cur = inv_runs[-1]
            inv_run, cur_digest = cur.id, cur.row["digest"] or "unknown"
            inventory = [(c, v, s) for c, (v, s) in sorted(inventories[cur.id].items())]
            older = [r for r in inv_runs if r.row["digest"] != cur.row["digest"]]
            if older:
                prev = older[-1]
                prev_digest = prev.row["digest"] or "unknown"
                inv_diff = inventory_diff(inventories[prev.id], inventories[cur.id])
        view_runs = [
            {
                "id": r.id,
                "started": when(r.row["started"]),
                "host": r.row["host"],
                "job": r.row["job"],
                "state": r.row["state"],
                "counts": ordered(r.counts),
            }
            for r in reversed(runs)
        ]
        return pages.render(
            "image.html.j2",
            title=alias,
            image=runs[-1].row,
            digests=list(digests.values()),
            runs=view_runs,
            inventory=inventory,
            inventory_run=inv_run,
            inv_diff=inv_diff,
            prev_digest=prev_digest,
            cur_digest=cur_digest,
            **self.ctx(stamped=False),
        )

    def list_page(
        self,
        title: str,
        headers: Sequence[str],
        rows: Iterable[Sequence[Any]],
        intro: str = "",
        root: str = "../",
    ) -> str:
        return pages.render(
            "list.html.j2",
            title=title,
            headers=headers,
            rows=pages.table_rows(rows),
            intro=intro,
            **self.ctx(root),
        )


@functools.lru_cache(maxsize=1 << 16)  # every run page links each of its checks
def _links(cid: str) -> tuple[str, str]:
    """A check's anchor on the run pages, and the link to its page from there."""
    return f"r-{slug(cid)}", f"../checks/{slug(cid)}.html"


def _env_strips(runs: Sequence[RunV], cid: str) -> tuple[list[dict[str, Any]], bool, list[str]]:
    """A check's verdicts per environment as a strip of squares (the newest STRIP runs),
    whether any strip was cut, and the libraries its results name (profiler kernels, the
    CPU library). ``runs``: oldest first (by start, then id)."""
    per_env: dict[str, list[tuple[RunV, str]]] = {}
    evidenced: dict[str, None] = {}
    for run in runs:
        res = run.results.get(cid)
        if res is not None:
            per_env.setdefault(run.env, []).append((run, res.verdict))
            if res.library:
                evidenced[res.library] = None
    envs, truncated = [], False
    anchor = str(pages.escape(slug(cid)))
    square = pages.escaped_square
    for env, items in sorted(per_env.items()):
        truncated = truncated or len(items) > STRIP
        # the link is two escaped strings joined (not Markup's +, which looks at each again)
        strip = "".join(
            [
                square(v, tail, f"{href}{anchor}")
                for (tail, href), v in [(_strip_parts(r), v) for r, v in items[-STRIP:]]
            ]
        )
        envs.append(
            {
                "env": env,
                "latest": items[-1][1],
                "latest_run": items[-1][0].id,
                "strip": pages.Markup(strip),
            }
        )
    return envs, truncated, list(evidenced)


def _strip_parts(run: RunV) -> tuple[pages.Markup, pages.Markup]:
    """A run's square in the status strips, escaped: (" · when · id", link up to the
    check's anchor). Made once per run: every check page has a square of it."""
    if run.strip_parts is None:
        run.strip_parts = (
            pages.escape(f" · {when(run.row['started'])} · {run.id[:8]}"),
            pages.escape(f"../runs/{run.id}.html#r-"),
        )
    return run.strip_parts


def _trend(cid: str, hist: list[History]) -> str:
    """The trend plot of a timed check: per environment its medians, fitted levels and shifts."""
    series = []
    for h in hist:
        pts = h.points
        levels = tuple(
            plots.Level(pts[s.start].when, pts[s.end - 1].when, s.level)
            for s in (h.analysis.segments if h.analysis else ())
        )
        markers = tuple(
            plots.Marker(pts[s.end].when, s.direction, s.kind)
            for s in (h.analysis.shifts if h.analysis else ())
        )
        series.append(
            plots.Series(h.env, tuple((p.when, p.median, p.q1, p.q3) for p in pts), levels, markers)
        )
    return plots.trend_svg(cid, series, hist[0].threshold)


def version_cells(
    cid: str, versions: list[tuple[str, dict[str, Any]]]
) -> tuple[list[dict[str, Any]], list[str]]:
    """The check's row in each published version that has it, and the columns they use."""
    rows_v, cols = [], []
    for name, doc in versions:
        cells = {}
        for r in doc["rows"]:
            if r["key"] == cid:
                cells = {col: c["verdict"] for col, c in r["cells"].items() if c["verdict"]}
        if cells:
            rows_v.append({"name": name, "slug": slug(name), "cells": cells})
            cols += [c for c in cells if c not in cols]
    return rows_v, cols


def _shift_row(c: ChangeV) -> dict[str, Any]:
    tone_, label = change_label(c)
    return {
        "when": when(c.when),
        "env": c.env,
        "tone": tone_,
        "label": label,
        "ratio": f"{c.ratio:.3f}",
        "first_run": c.first_run,
        "run": c.run,
    }
