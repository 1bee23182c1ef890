"""valorch diff BASE HEAD: what changed between two result sets, with a noise-aware timing rule.

A side is a run id (or unique prefix), a batch id, a published matrix version, a
baseline name, or ``latest`` / ``latest:ALIAS``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer
from rich.markup import escape
from rich.table import Table

from ..errors import InputError
from .common import DEFAULT_THRESHOLD
from . import flags
from .common import DbOption, JsonOption, err, load_catalog, out, sessions, write_output

FORMATS = ("term", "md", "html", "json", "junit")
NotifyOption = typer.Option(None, "--notify", help="Post the outcome: slack=URL or github=OWNER/REPO (token in "
                            "GITHUB_TOKEN, commit in GITHUB_SHA); repeatable.")


def say(line: str) -> None:
    err.print(line, markup=False, highlight=False)


def local_images() -> frozenset[str]:
    """Catalogued local images (named by alias in repro commands, not by digest)."""
    from ..errors import ValorchError

    try:
        return frozenset(i.alias for i in load_catalog(None).images if i.local)
    except ValorchError:
        return frozenset()


def print_term(report: Any, why: dict | None = None) -> None:
    from ..regression import rule as engine
    from ..render.diff import SECTIONS, _timing_text, header, why_text

    h = header(report)
    verdict = "[bold red]REGRESSED[/bold red]" if report.regressed else "[bold green]no regression[/bold green]"
    out.print(f"diff {report.base.kind} [bold]{report.base.label}[/bold] → {report.head.kind} "
              f"[bold]{report.head.label}[/bold]: {verdict}")
    out.print(f"  environments: {', '.join(report.base.envs)} → {', '.join(report.head.envs)}; "
              f"hosts: {', '.join(report.base.hosts) or '—'} → {', '.join(report.head.hosts) or '—'}; "
              f"threshold {report.threshold * 100:g} %")
    out.print("  counts: " + (", ".join(f"{k} {v}" for k, v in h["counts"].items()) or "nothing compared"))
    if h["noisy_host"]:
        out.print(f"  [yellow]noisy host[/yellow]: {h['noisy_host']} timed check(s) ran on a busy host; "
                  "their timing changes are shown (~), not counted")
    for issue in report.expired:
        out.print(f"  [yellow]known issue {issue.check} expired on {issue.expires}[/yellow]: {issue.reason}")
    for title, kinds in SECTIONS:
        rows = [c for c in report.changes if c.kind in kinds]
        if not rows:
            continue
        table = Table(title=f"{title} ({len(rows)})", title_justify="left")
        for col in ("", "environment", "check", "base", "head", "detail"):
            table.add_column(col)
        for c in sorted(rows, key=lambda c: -(c.timing.ratio if c.timing else 1)):
            table.add_row(c.mark, c.env, c.check, c.base or "—", c.head or "—",
                          "\n".join(x for x in (_timing_text(c) or c.note, escape(why_text(why, c))) if x),
                          style="red" if c.kind in engine.COUNTED else None)
        out.print(table)
    for env, backend, ratio, n in report.geomean:
        out.print(f"  geomean {env} ({backend or '—'}): {ratio:.3f} over {n} timed checks")


def diff(base: str = typer.Argument(..., help="run id/prefix, batch, matrix version, baseline, latest[:ALIAS], "
                                                "or latest:ALIAS:N (the N newest runs of an image's newest "
                                                "digest on one host, pooled)"),
         head: str = typer.Argument(..., help="the same kinds of names as BASE"),
         fmt: str = typer.Option("term", "--format", "-f", help="term, md, html, json or junit."),
         out_path: Path = typer.Option(None, "--out", "-o", help="Write here instead of stdout."),
         threshold: float = typer.Option(DEFAULT_THRESHOLD, callback=flags.number("--threshold", 0, 10, lo_open=True),
                                         help="Timing ratio threshold (0.05 = 5 %), above 0, at most 10."),
         known_issues: Path = typer.Option(None, "--known-issues", help="Known-issues YAML (failures expected)."),
         image: list[str] = typer.Option(None, "--image", help="Only these image aliases (repeatable)."),
         notify: list[str] = NotifyOption, db: str = DbOption, as_json: bool = JsonOption) -> None:
    """What changed between BASE and HEAD; exit 1 when anything regressed."""
    if as_json:  # the --json every command takes: the same as --format json
        fmt = "json"
    if fmt not in FORMATS:
        raise InputError(f"unknown --format '{fmt}'", f"use one of {', '.join(FORMATS)}")
    from ..regression import rule as engine
    from ..render.diff import RENDERERS
    from ..notify import targets as notify_targets
    from ..services import notify as notify_service
    from ..services import triage
    from ..services.diff import NoResults, compare

    targets = notify_targets.parse(notify or ())  # a bad --notify is exit 2 before anything else
    title = f"valorch diff {base} → {head}"
    factory = sessions(db)
    try:
        report = compare(factory, base, head, threshold, known_issues, image or (),
                         on_warning=lambda w: err.print(f"[yellow]warning:[/yellow] {escape(w)}"))
    except NoResults as exc:
        if targets:
            notify_service.post_empty(targets, title, exc.message, say)
        raise
    why = triage.for_runs(factory, report.head.runs, report.base)  # each red change says why
    reached = notify_service.post_report(factory, targets, report, title, say, local=local_images(), why=why) \
        if targets else True
    if fmt == "term" and out_path is None:
        print_term(report, why)
    elif fmt in ("term", "md", "json", "junit"):
        write_output(RENDERERS["md" if fmt == "term" else fmt](report, why), out_path)
    else:
        write_output(RENDERERS[fmt](report), out_path)
    if report.regressed:
        err.print(f"[red]regressed[/red]: {sum(1 for c in report.changes if c.kind in engine.COUNTED)} change(s)")
        raise typer.Exit(1)
    if not reached:
        raise typer.Exit(3)
