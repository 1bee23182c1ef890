"""Qualify a release: check the inputs, run the job, diff its runs against the baseline."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy.orm import Session, sessionmaker

from ..catalog.core import Catalog
from ..regression import gate
from ..regression import known_issues as ki
from ..regression import rule as engine
from ..store import queries
from . import views
from .candidate import check_baseline_for
from .diff import report_for, resolve, runs_side
from .run import execute_job


@dataclass(frozen=True)
class Qualification:
    """The outcome of a qualification: the report, the gate's verdict on it, and its exit code.
    The command prints it; it decides nothing."""

    lines: tuple[str, ...]
    report: engine.Report
    verdict: gate.Verdict
    tampered: tuple[
        str, ...
    ] = ()  # checks whose results were tampered with or cut at the output cap

    @property
    def exit_code(self) -> int:
        """1 not qualified (a failure, a regression, lost coverage, tampered output); 3 inconclusive
        (infrastructure errors and nothing else); 0 qualified."""
        return 1 if self.tampered else self.verdict.exit_code

    @property
    def qualified(self) -> bool:
        return self.exit_code == 0

    @property
    def infra_errors(self) -> bool:
        return self.verdict.infra_errors

    @property
    def reasons(self) -> tuple[str, ...]:
        """Why it is not qualified (or what a flag allowed), one line per reason, the first check ids named."""
        extra = (
            (
                f"{len(self.tampered)} tampered with or cut at the output cap: {', '.join(self.tampered[:5])}",
            )
            if self.tampered
            else ()
        )
        return extra + self.verdict.lines()


def qualify(
    spec: Any,
    cat: Catalog,
    factory: sessionmaker[Session],
    baseline: str,
    known_issues: Path | None,
    threshold: float,
    reporter: Any = None,
    on_warning: Any = None,
    allow_coverage_loss: bool = False,
    allow_known_failures: bool = False,
    **where: Any,
) -> Qualification:
    """Run the job, diff its runs against ``baseline`` and gate: every unexcused failure, every
    timing regression and (unless ``allow_coverage_loss``) every lost baseline check fails it;
    a check that failed in the baseline too fails it unless ``allow_known_failures``."""
    if known_issues:
        loaded = ki.load(known_issues)  # bad input fails before an hour of runs, not after
        for warning in loaded.warnings if on_warning else ():
            on_warning(warning)
    with factory() as session:
        base = resolve(session, baseline)  # unknown baseline: exit 2 now
    check_baseline_for(
        spec, cat, base.envs, baseline
    )  # one candidate against a many-image baseline: exit 2
    summaries = execute_job(spec, cat, factory, reporter=reporter, **where)
    with factory() as session:
        runs = [queries.get_run(session, s.run_id) for s in summaries]
        batch = runs[0].batch if runs else "none"
        head = runs_side(session, f"{spec.name} {batch[:8]}", "qualify", runs)
        report = report_for(session, base, head, threshold, known_issues)
    verdict = gate.decide(
        report,
        gate_coverage=not allow_coverage_loss,
        allow_known_failures=allow_known_failures,
        infra_errors=any(s.infra_errors for s in summaries),
    )
    return Qualification(
        tuple(views.summary_line(s) for s in summaries),
        report,
        verdict,
        tuple(sorted({c for s in summaries for c in s.protocol_errors})),
    )
