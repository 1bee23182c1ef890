"""Terminal views that more than one command prints: the diff report (``diff``, ``qualify``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.markup import escape

from ..render.sides import own_aliases, paired_names
from ..words import count
from .common import out
from .tables import Table

if TYPE_CHECKING:
    from ..regression.gate import Verdict
    from ..regression.rule import Report
    from ..regression.triage import Triage


def print_term(
    report: Report, verdict: Verdict | None = None, why: dict[tuple[str, str], Triage] | None = None
) -> None:
    """The verdict block (qualified or not, why, the first check ids), the gate's failures,
    regressions and lost coverage, then every other section; each red cell with its triage."""

    from ..render.diff import SECTIONS, count_words, detail, gate_mark, header, verdict_rows
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
    base, head = report.base, report.head
    sides = (
        f"diff {escape(base.kind_shown + ' ' if base.kind_shown else '')}[bold]{escape(base.label)}"
        f"[/bold] → {escape(head.kind_shown + ' ' if head.kind_shown else '')}"
        f"[bold]{escape(head.label)}[/bold]"
    )
    # with a verdict its counts said what decided; a word of its own could contradict them
    out.print(sides if verdict is not None else f"{sides}: {verdict_word}")
    if verdict is not None:
        for r in verdict.reasons:
            out.print(f"  {'[red]✗[/red]' if r.gates else '·'} {escape(r.line())}")
        if verdict.excused:
            out.print(f"  · {verdict.excused} excused by waivers")
        out.print(f"  · counts: {verdict.counts.said()}")
        for title, gated in verdict_rows(verdict):  # what failed the gate, with each gate's note
            gates = ("", "environment", "check", "base", "head", "gate", "detail")
            table = Table(*gates, title=f"{title} ({len(gated)})", title_justify="left")
            for cell, gate_note in gated:
                shown.add(id(cell))
                table.add_row(
                    gate_mark(gate_note),
                    cell.env,
                    cell.check,
                    cell.base or "—",
                    cell.head or "—",
                    gate_note,
                    detail(cell, why),
                    style="red",
                )
            out.print(table)
    out.print(
        f"  environments: {', '.join(own_aliases(report.base.envs, 'base'))} → "
        f"{', '.join(own_aliases(report.head.envs, 'head'))}; "
        + "".join(f"paired {p}; " for p in paired_names(report.head.envs))
        + f"hosts: {', '.join(report.base.hosts) or '—'} → {', '.join(report.head.hosts) or '—'}; "
        f"threshold {report.threshold * 100:g} %"
    )
    out.print("  counts: " + count_words(report, verdict))
    if h["noisy_host"]:
        out.print(
            f"  [yellow]noisy host[/yellow]: {count(h['noisy_host'], 'timed check')} ran on a busy host; "
            "their timing changes are shown (~), not counted"
        )
    for issue in report.expired:
        out.print(
            f"  [yellow]known issue {issue.check} expired on {issue.until}[/yellow]: {escape(issue.reason)}"
        )
    for title, kinds in SECTIONS:
        rows = [c for c in report.changes if c.kind in kinds and id(c) not in shown]
        if not rows:
            continue
        columns = ("", "environment", "check", "base", "head", "detail")
        table = Table(*columns, title=f"{title} ({len(rows)})", title_justify="left")
        for c in sorted(rows, key=lambda r: -(r.timing.ratio if r.timing else 1)):
            table.add_row(
                c.mark,
                c.env,
                c.check,
                c.base or "—",
                c.head or "—",
                detail(c, why),
                style="red" if c.kind in COUNTED else None,
            )
        out.print(table)
    for env, backend, ratio, n in report.geomean:
        out.print(f"  geomean {env} ({backend or '—'}): {ratio:.3f} over {n} timed checks")
