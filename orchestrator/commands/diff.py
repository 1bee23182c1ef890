"""valorch diff BASE HEAD: what changed between two result sets, with a noise-aware timing rule.

A side is a run id (or unique prefix), a batch id, a published matrix version, a
baseline name, or ``latest`` / ``latest:ALIAS``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer
from rich.markup import escape

from .. import satellites
from ..errors import InputError
from . import flags
from .common import (
    DbOption,
    JsonOption,
    NotifyOption,
    OutOption,
    ThresholdOption,
    end_with,
    err,
    local_images,
    say,
    sessions,
    write_output,
)

FORMATS = ("term", "md", "html", "json", "junit")


def diff(
    base: str = typer.Argument(
        ...,
        help="A run id or prefix, batch, matrix version, baseline, latest[:ALIAS], "
        "or latest:ALIAS:N (the N newest runs of an image's newest "
        "digest on one host, pooled).",
    ),
    head: str = typer.Argument(..., help="The same kinds of names as BASE."),
    fmt: str = flags.option(
        "term",
        "--format",
        "-f",
        applies=flags.FORMAT,
        metavar="<term|md|html|json|junit>",
        help="term, md, html, json or junit (--json is the same as --format json).",
    ),
    out_path: Path = OutOption,
    threshold: float = ThresholdOption,
    known_issues: Path = typer.Option(
        None, "--known-issues", help="Known-issues YAML (failures expected)."
    ),
    image: list[str] = typer.Option(None, "--image", help="Only these image aliases (repeatable)."),
    gate_coverage: bool = typer.Option(
        None,
        "--gate-coverage/--no-gate-coverage",
        help="Exit 1 also when coverage was lost: a BASE check missing from "
        "HEAD, or pass → unsupported/partial/skip (listed first) [default: on with "
        "--notify, so a green post never hides lost coverage; off without].",
        show_default=False,
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
    include_adhoc: bool = typer.Option(
        False,
        "--include-adhoc",
        help="latest[:ALIAS] counts bisect runs, and ad-hoc runs where a named job ran the "
        "image too [default: named jobs' runs; ad-hoc ones when no named job ran it].",
    ),
    notify: list[str] = NotifyOption,
    db: str = DbOption,
    as_json: bool = JsonOption,
) -> None:
    """What changed between BASE and HEAD; exit 1 when a HEAD check fails unexcused, still fails,
    or a timing regressed (and when coverage was lost with --gate-coverage, the default with
    --notify)."""
    if as_json:  # the --json every command takes: the same as --format json
        fmt = "json"
    if fmt not in FORMATS:
        raise InputError(f"unknown --format '{fmt}'", f"use one of {', '.join(FORMATS)}")
    from ..render.diff import RENDERERS
    from ..services import triage
    from ..services.diff import ending, judge
    from .terminal import print_term

    # the notify satellite, loaded where --notify is given a bad --notify is exit 2 before anything else
    notify_service: Any = satellites.load("notify", "service", "--notify") if notify else None
    targets = notify_service.parse_targets(notify) if notify_service else ()
    title = f"valorch diff {base} → {head}"
    factory = sessions(db)
    what = (base, head, threshold, known_issues, image, pair, include_adhoc)
    report = _compare(factory, what, notify_service, targets, title)
    verdict = judge(
        report,
        gate_coverage=gate_coverage,
        allow_known_failures=allow_known_failures,
        notifying=bool(targets),
    )
    why = triage.for_runs(factory, report.head.runs, report.base)  # each red change says why
    posting = notify_service.Posting(report, title, verdict, why) if targets else None
    reached = not targets or bool(
        notify_service.post_report(factory, targets, posting, say, local=local_images())
    )
    if fmt == "term" and out_path is None:
        print_term(report, verdict, why)
    else:
        write_output(RENDERERS["md" if fmt == "term" else fmt](report, verdict, why), out_path)
    end_with(ending(verdict, notified=reached))


def _compare(
    factory: Any, what: tuple[Any, ...], notify_service: Any, targets: Any, title: str
) -> Any:
    """The diff report of ``what`` (base, head, threshold, known issues, images, pairs,
    include ad-hoc); with nothing to compare, the notify targets hear so before the error."""
    from ..services.diff import NoResultsError, compare
    from ..services.run import load_known_issues

    base, head, threshold, known_issues, image, pair, include_adhoc = what
    try:
        issues = load_known_issues(
            known_issues, lambda w: err.print(f"[yellow]warning:[/yellow] {escape(w)}")
        )
        return compare(
            factory,
            base,
            head,
            threshold,
            issues,
            image or (),
            pair=pair or (),
            on_pair=lambda b, h: say(f"paired {b} (base) with {h} (head)"),
            include_adhoc=include_adhoc,
        )
    except NoResultsError as exc:
        if targets:
            notify_service.post_empty(targets, title, exc.message, say)
        raise
