"""What diff and qualify tell their --notify targets: a Report → a notify.message.Outcome."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from orchestrator.ext.notify import send
from orchestrator.ext.notify.message import Outcome, Regression
from orchestrator.ext.notify.targets import parse
from orchestrator.render.diff import _timing_text, count_words, why_text
from orchestrator.render.repro import command
from orchestrator.spec import COUNTED

if TYPE_CHECKING:
    from sqlalchemy.orm import Session, sessionmaker

    from orchestrator.ext.notify.targets import Target
    from orchestrator.regression.gate import Verdict
    from orchestrator.regression.rule import Report
    from orchestrator.render.diff import Why

parse_targets = parse  # --notify's values as targets: a bad one is exit 2 before any work


@dataclass(frozen=True)
class Posting:
    """A diff or qualify report as it is posted."""

    report: Report
    title: str
    verdict: Verdict | None = None
    why: Why | None = None
    infra: bool = False
    report_path: str = ""


def from_report(posting: Posting, images: dict[str, dict[str, Any]]) -> Outcome:
    """The outcome of a diff Report: its counted regressions (new by construction: what
    passed in the base), or with the gate's ``verdict`` every cell that fails the gate, each
    with the command that re-runs it on the head's image.
    ``images``: head environment → {alias, reference, digest, local, host, cpu_only}."""
    report, verdict, report_path = posting.report, posting.verdict, posting.report_path
    regs = []
    failing = verdict.failing_cells() if verdict is not None else None
    for c in report.changes:
        if (c.kind not in COUNTED) if failing is None else ((c.env, c.check) not in failing):
            continue
        env = c.env.split(" → ")[-1]
        img = images.get(env) or {"alias": env, "reference": env, "digest": None}
        detail = _timing_text(c) or f"{c.base} → {c.head}" + (f": {c.note}" if c.note else "")
        said = why_text(posting.why, c).removeprefix("why: ")
        regs.append(Regression(c.env, c.check, detail, command(check=c.check, **img), said))
    summary = f"counts: {count_words(report, verdict)}"
    head = (posting.title, len(report.head.observations), tuple(regs))
    if verdict is None:
        return Outcome(*head, posting.infra, summary, report_path)
    said = verdict.headline()  # the gate's own decision, in the words of every other sink
    summary = f"{said} (exit {verdict.exit_code}); {summary}"
    infra = posting.infra or verdict.infra_errors
    return Outcome(*head, infra, summary, report_path, said, verdict.exit_code == 1)


def head_images(
    factory: sessionmaker[Session], run_ids: Sequence[str], local: frozenset[str] = frozenset()
) -> dict[str, dict[str, Any]]:
    """Head environment → what a repro command needs to name its image."""
    from orchestrator.store import queries

    out: dict[str, dict[str, Any]] = {}
    with factory() as session:
        for rid in run_ids:
            run = queries.get_run(session, rid)
            if run is not None:
                out[run.image.alias] = {
                    "alias": run.image.alias,
                    "reference": run.image.reference,
                    "digest": run.image.digest,
                    "local": run.image.alias in local,
                    "host": run.executor == "host",
                    "cpu_only": run.cpu_only,
                }
    return out


def post_report(
    factory: sessionmaker[Session],
    targets: Sequence[Target],
    posting: Posting,
    say: Callable[[str], None],
    *,
    local: frozenset[str] = frozenset(),
) -> bool:
    """Post ``posting`` to every target; True when each was reached (failures are said)."""
    images = head_images(factory, posting.report.head.runs, local)
    return not send.send(targets, from_report(posting, images), say=say)


def post_empty(
    targets: Sequence[Target], title: str, why: str, say: Callable[[str], None], infra: bool = False
) -> bool:
    """Zero ingested results: a failure, never a success (conbench/conbench#1191)."""
    return not send.send(targets, Outcome(title, 0, infra=infra, summary=why), say=say)
