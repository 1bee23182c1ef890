"""The site's pages: view data in, HTML strings out (jinja2, autoescaped). Long
tables (a run's results, the matrix body, the lists) are built here row by row with
explicit escaping, which keeps a large site's render fast (docs/benchmarks.md)."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence
from typing import Any

from jinja2 import Environment, PackageLoader, select_autoescape
from markupsafe import Markup, escape

from orchestrator.render.badges import badge, cell_html, note_html, tone
from orchestrator.render.breaks import breakable, wbr
from orchestrator.render.style import CSS as PAGE_CSS
from orchestrator.words import count

_env = Environment(
    loader=PackageLoader("orchestrator.ext.site", "templates"),
    autoescape=select_autoescape(default=True, default_for_string=True),
    trim_blocks=True,
    lstrip_blocks=True,
)
_env.globals.update(badge=badge, note_html=note_html, page_css=PAGE_CSS)
_env.filters["breakable"] = breakable
_env.filters["wbr"] = wbr
_env.filters["count"] = count  # {{ n | count("host") }}: "1 host", "2 hosts"


def render(template: str, **ctx: Any) -> str:
    return _env.get_template(template).render(**ctx)


@functools.cache  # a few statuses: a check page's strips hold 600 squares
def _square(status: str) -> tuple[str, str]:
    return f'<a class="sq {tone(status)}" data-status="{_esc(status)}" href="', _esc(status)


def escaped_square(status: str, title_tail: str, href: str) -> str:
    """One run in a status strip: a coloured square titled status + title_tail, from parts
    escaped already (a check page's strips hold 600 squares, each run's parts made once)."""
    start, said = _square(status)
    t = f"{said}{title_tail}"
    return f'{start}{href}" title="{t}" aria-label="{t}"></a>'


@functools.cache
def _badge(status: str) -> str:
    return str(badge(status))


def repro_html(commands: Sequence[str], opened: bool = True) -> str:
    if not commands:
        return ""
    return (
        f'<details class="repro"{" open" if opened else ""}><summary>repro</summary>'
        + "".join(f"<code>{escape(c)}</code>" for c in commands)
        + "</details>"
    )


def fmt_seconds(s: float | None) -> str:
    if s is None:
        return ""
    if s < 1e-3:
        return f"{s * 1e6:.3g} µs"
    return f"{s * 1e3:.3g} ms" if s < 1 else f"{s:.3g} s"


def matrix_body(
    rows: Iterable[tuple[str, str, Sequence[str], str, list[Any]]], literal: bool
) -> Markup:
    """rows: (key, suite, labels, section, cells: [(its TCell, the link to its run, repro
    commands)]); a heading row opens each section (the seed-shaped layout)."""
    out, section, width = [], "", 0
    for key, suite, labels, in_section, row_cells in rows:
        width = width or 1 + len(row_cells)
        if in_section and in_section != section:
            section = in_section
            out.append(
                f'<tr class="section"><th colspan="{width}" scope="rowgroup">{escape(section)}</th></tr>'
            )
        label = f"<code>{wbr(labels[0])}</code>" if literal else str(wbr(labels[0]))
        sub = " · ".join(x for x in labels[1:] if x)
        sub = f'<div class="sub">{escape(sub)}</div>' if sub else ""
        cells = []
        for c, href, repro in row_cells:
            title = f' title="{escape(c.note)}"' if c.note else ""
            link = (
                f'<div class="runs"><a class="run-link" href="{escape(href)}">run</a></div>'
                if href
                else ""
            )
            flags = "".join(f" flag-{escape(f)}" for f in c.flags)
            cells.append(
                f'<td class="cell{flags}" data-verdict="{escape(c.verdict)}"{title}>'
                f"{cell_html(c.text, c.verdict)}{link}{repro_html(repro, opened=False)}</td>"
            )
        out.append(
            f'<tr data-key="{escape(key)}" data-suite="{escape(suite)}"><th class="rowh" scope="row">'
            f"{label}{sub}</th>{''.join(cells)}</tr>"
        )
    return Markup("\n".join(out))


_VERSION_TAIL = re.compile(r"^(.+?)[_\-:]((?:v|release_)?\d[\w.+-]*)$")


def split_column(name: str) -> tuple[str, str]:
    """(family, version) of a column name: 'cpu_debian12_py3.11_pytorch_2.13' →
    ('cpu_debian12_py3.11_pytorch', '2.13'); ('', name) where no version ends it."""
    m = _VERSION_TAIL.match(name)
    return (m.group(1), m.group(2)) if m else ("", name)


def column_groups(names: Sequence[str]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """A two-level header: ([{text, span}] of the family row, [{text, name, family}] of the
    leaves). Consecutive columns of one family share a top cell; the leaf shows what tells
    them apart (the version), so no two columns read the same. No family row when no column
    has a family (e.g. backends)."""
    parts = [split_column(n) for n in names]
    families = [f for f, _ in parts]
    # a family of one column: the whole name on the leaf, nothing over it
    counts = {f: families.count(f) for f in families}
    leaves: list[dict[str, Any]] = []
    top: list[dict[str, Any]] = []
    for name, (family, version) in zip(names, parts, strict=True):
        if not family or counts[family] < 2:
            family, version = "", name
        leaves.append({"text": version, "name": name, "family": family})
        if top and top[-1]["text"] == family and family:
            top[-1]["span"] += 1
        else:
            top.append({"text": family, "span": 1})
    # 'a_1' and 'a-1': say it all
    if len({(leaf["family"], leaf["text"]) for leaf in leaves}) < len(leaves):
        return [], [{"text": n, "name": n, "family": ""} for n in names]
    return (top if any(t["text"] for t in top) else []), leaves


_CACHE: dict[str, str] = {}


def _esc(text: str) -> str:
    """escape() for the strings every page repeats (check ids, suites, verdicts)."""
    hit = _CACHE.get(text)
    if hit is None:
        hit = str(escape(text))
        if len(_CACHE) < 200_000:
            _CACHE[text] = hit
    return hit


_ROW_HEADS: dict[tuple[str, str, str, str, str], str] = {}


def result_rows(
    results: Iterable[tuple[Any, str, tuple[str, str], list[str], dict[str, Any]]],
) -> Markup:
    """rows: (a run's result (views.Res), its verdict, (its anchor, its check's link), its
    repro commands, the run's triage: check → (class, reason))"""
    out = []
    for r, verdict, (anchor, href), repro, triage in results:
        # a row's first cells (its check, suite and verdict) recur on every run's page:
        # made once per site (and the check's breaks with them)
        key = (anchor, href, r.check, r.suite, verdict)
        head = _ROW_HEADS.get(key)
        if head is None:
            head = (
                f'<tr id="{_esc(anchor)}" data-verdict="{_esc(verdict)}"><td><a href="{_esc(href)}">'
                f"<code>{wbr(r.check)}</code></a></td><td>{_esc(r.suite)}</td><td>{_badge(verdict)}</td>"
            )
            if len(_ROW_HEADS) < 100_000:
                _ROW_HEADS[key] = head
        median = ""
        if r.median is not None:
            cv = f", CV {r.cv * 100:.1f} %" if r.cv is not None else ""
            flag = ' <span class="flag">noisy host</span>' if r.noisy else ""
            median = f'{fmt_seconds(r.median)} <span class="muted small">(n={r.n}{cv})</span>{flag}'
        msg = str(escape(r.message[:400])) if r.message else ""
        if why := triage.get(r.check):
            msg = f'<div class="why"><strong>{_esc(why[0])}</strong>: {_esc(why[1])}</div>' + msg
        out.append(
            f'{head}<td class="small">{_esc(" → ".join(r.statuses))}</td><td class="small">{r.duration:.2f} s</td>'
            f'<td>{median}</td><td class="small msg">{msg}{repro_html(repro)}</td></tr>'
        )
    return Markup("\n".join(out))


def table_rows(rows: Iterable[Sequence[Any]]) -> Markup:
    """Cells are escaped unless already Markup; a text cell may wrap between its parts
    (wbr: a feature named torch.backends.cuda.matmul.allow_fp16_… fits 800 px)."""
    return Markup(
        "\n".join(
            "<tr>"
            + "".join(f"<td>{c if isinstance(c, Markup) else wbr(str(c))}</td>" for c in row)
            + "</tr>"
            for row in rows
        )
    )


def link(href: str, text: str, code: bool = False) -> Markup:
    inner = f"<code>{wbr(text)}</code>" if code else wbr(text)
    return Markup(f'<a href="{escape(href)}">{inner}</a>')


def badges(counts: Iterable[tuple[str, int]]) -> Markup:
    return Markup(" ".join(str(badge(s, f"{s} {n}")) for s, n in counts))
