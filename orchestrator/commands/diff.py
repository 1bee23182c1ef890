"""valorch diff BASE HEAD: what changed between two result sets, with a noise-aware timing rule.

A side is a run id (or unique prefix), a batch id, a published matrix version, a
baseline name, or ``latest`` / ``latest:ALIAS``.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.markup import escape
from rich.table import Table

from ..errors import InputError
from . import flags
from .common import (
    DEFAULT_THRESHOLD,
    DbOption,
    JsonOption,
    err,
    load_catalog,
    out,
    sessions,
    write_output,
)

FORMATS = ("term", "md", "html", "json", "junit")
NotifyOption = typer.Option(
    None,
    "--notify",
    help="Post the outcome: slack=URL or github=OWNER/REPO (token in "
    "GITHUB_TOKEN, commit in GITHUB_SHA); repeatable.",
)

if TYPE_CHECKING:
    from ..regression.gate import Verdict
    from ..regression.rule import Report
    from ..render.diff import Why


def say(line: str) -> None:
    err.print(line, markup=False, highlight=False)


def local_images() -> frozenset[str]:
    """Catalogued local images (named by alias in repro commands, not by digest)."""
    from ..errors import ValorchError

    try:
        return frozenset(i.alias for i in load_catalog(None).images if i.local)
    except ValorchError:
        return frozenset()


def print_term(report: Report, verdict: Verdict | None = None, why: Why | None = None) -> None:
    """The verdict block (qualified or not, why, the first check ids), the gate's failures,
    regressions and lost coverage, then every other section; each red cell with its triage."""

    from ..render.diff import SECTIONS, _timing_text, header, verdict_rows, why_text
    from ..spec import COUNTED

    h = header(report)
    verdict_word = (
        "[bold red]REGRESSED[/bold red]"
        if report.regressed
        else "[bold green]no regression[/bold green]"
    )
    shown: set[int] = set()
    if verdict is not None:  # the verdict first: qualified or not, and why
        style = "bold green" if verdict.qualified else "bold red"
        out.print(
            f"[{style}]{verdict.word}[/{style}]: {escape(verdict.why())} (exit {verdict.exit_code})"
        )
    out.print(
        f"diff {report.base.kind} [bold]{escape(report.base.label)}[/bold] → {report.head.kind} "
        f"[bold]{escape(report.head.label)}[/bold]: {verdict_word}"
    )
    if verdict is not None:
        for r in verdict.reasons:
            out.print(f"  {'[red]✗[/red]' if r.gates else '·'} {escape(r.line())}")
        if verdict.excused:
            out.print(f"  · {verdict.excused} excused by known issues")
        for title, rows in verdict_rows(verdict):
            table = Table(title=f"{title} ({len(rows)})", title_justify="left")
            for col in ("", "environment", "check", "base", "head", "gate", "detail"):
                table.add_column(col)
            for c, gate_note in rows:
                shown.add(id(c))
                detail = "\n".join(x for x in (_timing_text(c) or c.note, why_text(why, c)) if x)
                table.add_row(
                    c.mark or "❌",
                    escape(c.env),
                    escape(c.check),
                    c.base or "—",
                    c.head or "—",
                    gate_note,
                    escape(detail),
                    style="red",
                )
            out.print(table)
    out.print(
        f"  environments: {', '.join(report.base.envs)} → {', '.join(report.head.envs)}; "
        f"hosts: {', '.join(report.base.hosts) or '—'} → {', '.join(report.head.hosts) or '—'}; "
        f"threshold {report.threshold * 100:g} %"
    )
    out.print(
        "  counts: " + (", ".join(f"{k} {v}" for k, v in h["counts"].items()) or "nothing compared")
    )
    if h["noisy_host"]:
        out.print(
            f"  [yellow]noisy host[/yellow]: {h['noisy_host']} timed check(s) ran on a busy host; "
            "their timing changes are shown (~), not counted"
        )
    for issue in report.expired:
        out.print(
            f"  [yellow]known issue {issue.check} expired on {issue.expires}[/yellow]: {escape(issue.reason)}"
        )
    for title, kinds in SECTIONS:
        section = [c for c in report.changes if c.kind in kinds and id(c) not in shown]
        if not section:
            continue
        table = Table(title=f"{title} ({len(section)})", title_justify="left")
        for col in ("", "environment", "check", "base", "head", "detail"):
            table.add_column(col)
        for c in sorted(section, key=lambda c: -(c.timing.ratio if c.timing else 1)):
            table.add_row(
                c.mark,
                c.env,
                c.check,
                c.base or "—",
                c.head or "—",
                "\n".join(x for x in (_timing_text(c) or c.note, escape(why_text(why, c))) if x),
                style="red" if c.kind in COUNTED else None,
            )
        out.print(table)
    for env, backend, ratio, n in report.geomean:
        out.print(f"  geomean {env} ({backend or '—'}): {ratio:.3f} over {n} timed checks")


def diff(
    base: str = typer.Argument(
        ...,
        help="A run id or prefix, batch, matrix version, baseline, latest[:ALIAS], "
        "or latest:ALIAS:N (the N newest runs of an image's newest "
        "digest on one host, pooled).",
    ),
    head: str = typer.Argument(..., help="The same kinds of names as BASE."),
    fmt: str = typer.Option("term", "--format", "-f", help="term, md, html, json or junit."),
    out_path: Path = typer.Option(None, "--out", "-o", help="Write here instead of stdout."),
    threshold: float = typer.Option(
        DEFAULT_THRESHOLD,
        callback=flags.number("--threshold", 0, 10, lo_open=True),
        help="Timing ratio threshold (0.05 = 5 %), above 0, at most 10.",
    ),
    known_issues: Path = typer.Option(
        None, "--known-issues", help="Known-issues YAML (failures expected)."
    ),
    image: list[str] = typer.Option(None, "--image", help="Only these image aliases (repeatable)."),
    gate_coverage: bool = typer.Option(
        False,
        "--gate-coverage",
        help="Exit 1 also when coverage was lost: a BASE check missing from "
        "HEAD, or pass → unsupported/partial/skip (listed first).",
    ),
    allow_known_failures: bool = typer.Option(
        False,
        "--allow-known-failures",
        help="Do not gate on checks that fail in BASE and HEAD alike "
        "(still listed first, as 'still failing').",
    ),
    pair: list[str] = typer.Option(
        None,
        "--pair",
        help="Compare a base image with its successor: "
        "'rocm6.3_*=rocm6.4_*' pairs aliases whose * match the same text "
        "(repeatable; docs/site.md, pairing across releases).",
    ),
    notify: list[str] = NotifyOption,
    db: str = DbOption,
    as_json: bool = JsonOption,
) -> None:
    """What changed between BASE and HEAD; exit 1 when a HEAD check fails unexcused, still fails,
    or a timing regressed (and with --gate-coverage when coverage was lost)."""
    if as_json:  # the --json every command takes: the same as --format json
        fmt = "json"
    if fmt not in FORMATS:
        raise InputError(f"unknown --format '{fmt}'", f"use one of {', '.join(FORMATS)}")
    from ..notify import targets as notify_targets
    from ..render.diff import RENDERERS
    from ..services import notify as notify_service
    from ..services import triage
    from ..services.diff import NoResults, compare, judge

    targets = notify_targets.parse(notify or ())  # a bad --notify is exit 2 before anything else
    title = f"valorch diff {base} → {head}"
    factory = sessions(db)
    try:
        report = compare(
            factory,
            base,
            head,
            threshold,
            known_issues,
            image or (),
            on_warning=lambda w: err.print(f"[yellow]warning:[/yellow] {escape(w)}"),
            pair=pair or (),
            on_pair=lambda b, h: say(f"paired {b} (base) with {h} (head)"),
        )
    except NoResults as exc:
        if targets:
            notify_service.post_empty(targets, title, exc.message, say)
        raise
    verdict = judge(report, gate_coverage=gate_coverage, allow_known_failures=allow_known_failures)
    why = triage.for_runs(factory, report.head.runs, report.base)  # each red change says why
    reached = (
        notify_service.post_report(
            factory, targets, report, title, say, local=local_images(), verdict=verdict, why=why
        )
        if targets
        else True
    )
    if fmt == "term" and out_path is None:
        print_term(report, verdict, why)
    elif fmt == "html":
        write_output(RENDERERS[fmt](report, verdict), out_path)
    else:
        write_output(RENDERERS["md" if fmt == "term" else fmt](report, verdict, why), out_path)
    if verdict.exit_code == 1:
        err.print(f"[red]gate failed[/red]: {escape(verdict.why())}")
        raise typer.Exit(1)
    if not reached:
        raise typer.Exit(3)
