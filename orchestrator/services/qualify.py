"""Qualify a release: check the inputs, run the job, diff its runs against the baseline, and
decide how it ends (``Qualification.outcome``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..catalog.core import Catalog
from ..regression import gate
from ..regression import rule as engine
from ..spec import DEFAULT_THRESHOLD, JobSpec
from . import views
from .candidate import check_baseline_for
from .diff import NoResultsError, report_for, resolve, runs_side
from .outcome import GATE_FAILED, INCONCLUSIVE, Kind, Outcome, Said, passed
from .pipeline import RunOptions, RunProgress, execute
from .placing import Where
from .run import load_known_issues, stored_runs

if TYPE_CHECKING:
    from sqlalchemy.orm import Session, sessionmaker


@dataclass(frozen=True)
class QualifyOptions:
    """A qualification: the ``baseline`` to compare with, the known issues that excuse, the
    timing ``threshold``, what a flag allows, and where the job runs."""

    baseline: str
    known_issues: Path | None = None
    threshold: float = DEFAULT_THRESHOLD
    allow_coverage_loss: bool = False
    allow_known_failures: bool = False
    where: Where = field(default_factory=Where)
    readiness: str | None = None  # --readiness BASIS: readiness is a further gate
    readiness_window: str = "7d"
    allow_empty: bool = False  # --allow-empty: a candidate that proved nothing may qualify


@dataclass(frozen=True)
class ReadinessGate:
    """What ``qualify --readiness`` took from the readiness gate: its answer as a reason of
    the qualification (``further``), its report (readiness.md) and what qualify.json keeps."""

    further: gate.Further
    report: Any
    summary: dict[str, Any]


@dataclass(frozen=True)
class Qualification:
    """The outcome of a qualification: the report, the gate's verdict on it (the one
    decision: the readiness gate, tampered output and an empty candidate folded in), and
    how the command ends (``outcome``). The command prints it; it decides nothing."""

    lines: tuple[str, ...]
    report: engine.Report
    verdict: gate.Verdict
    # checks whose results were tampered with or cut at the output cap
    tampered: tuple[str, ...] = ()
    baseline: str = ""
    readiness: ReadinessGate | None = None

    @property
    def infra_errors(self) -> bool:
        return self.verdict.infra_errors

    def outcome(self, report_dir: Path, notified: bool = True) -> Outcome:
        """How ``valorch qualify`` ends, its reports in ``report_dir``: the verdict's exit code
        and reasons; 3 when qualified but a notification did not reach its target (``notified``
        False: the news is lost, CI must not read it as a success)."""
        reasons = tuple(Said("plain", f"  {line}") for line in self.verdict.lines())
        if self.verdict.exit_code == GATE_FAILED:
            failed = Said(
                "fail", f"qualification failed against {self.baseline}; see {report_dir}/report.md"
            )
            codes = {r.code for r in self.verdict.gating}
            kind: Kind = "tampered" if codes == {gate.TAMPERED_REASON} else "regressed"
            return Outcome(GATE_FAILED, kind, self.verdict.why(), (failed, *reasons))
        if self.verdict.exit_code == INCONCLUSIVE:
            infra = Said(
                "warn", "infrastructure errors: the affected checks are inconclusive; not qualified"
            )
            return Outcome(INCONCLUSIVE, "infrastructure", infra.text, (infra,))
        # what a flag allowed is said, never hidden
        said = (Said("pass", f"qualified against {self.baseline}"), *reasons)
        if not notified:
            return Outcome(
                INCONCLUSIVE,
                "notification lost",
                "qualified, but a notification did not reach its target",
                said,
            )
        return passed(self.verdict.why(), said)


def judge(
    report: engine.Report,
    opts: QualifyOptions,
    infra_errors: bool = False,
    tampered: tuple[str, ...] = (),
    further: tuple[gate.Further, ...] = (),
) -> gate.Verdict:
    """qualify's one decision (pure): the gate over the report with qualify's flags, the
    tampered checks, the readiness gate's answer, and no evidence never a pass."""
    return gate.decide(
        report,
        gate_coverage=not opts.allow_coverage_loss,
        allow_known_failures=opts.allow_known_failures,
        infra_errors=infra_errors,
        tampered=tampered,
        further=further,
        require_evidence=True,
        allow_empty=opts.allow_empty,
    )


def qualify(
    spec: JobSpec,
    cat: Catalog,
    factory: sessionmaker[Session],
    opts: QualifyOptions,
    progress: RunProgress,
) -> Qualification:
    """Run the job, diff its runs against ``opts.baseline`` and gate (``judge``). The known-issues
    file is read once, before anything runs (bad input is exit 2 now, not after an hour of
    runs), and that reading excuses the report's failures."""
    issues = load_known_issues(opts.known_issues, progress.warning)
    with factory() as session:
        base = resolve(session, opts.baseline)  # unknown baseline: exit 2 now
    # one candidate against a many-image baseline: exit 2
    check_baseline_for(spec, cat, base.envs, opts.baseline)
    _, summaries = execute(RunOptions(job=spec, where=opts.where), cat, factory, progress)
    with factory() as session:
        runs = stored_runs(session, summaries)
        batch = runs[0].batch if runs else "none"
        head = runs_side(session, f"{spec.name} {batch[:8]}", "qualify", runs)
        try:
            report = report_for(session, base, head, opts.threshold, issues)
        except NoResultsError:
            if head.observations:  # the baseline is empty: bad input, said as such
                raise
            # no candidate results: nothing to judge, which the verdict says (fail closed)
            report = engine.compare(base, head, opts.threshold)
    tampered = tuple(sorted({c for s in summaries for c in s.protocol_errors}))
    ready = None
    if opts.readiness:  # the readiness gate's answer, as services/readiness.py decides it
        from . import readiness as rs

        got = rs.decide(factory, spec.name, opts.readiness, opts.readiness_window, issues=issues)
        said, summary = rs.outcome(got), rs.summary(got)
        cells = tuple(summary["readiness"]["gating"])
        further = gate.Further("readiness", said.code, said.reason, cells)
        ready = ReadinessGate(further, got, summary)
    verdict = judge(
        report,
        opts,
        infra_errors=any(s.infra_errors for s in summaries),
        tampered=tampered,
        further=(ready.further,) if ready is not None else (),
    )
    return Qualification(
        tuple(views.summary_line(s) for s in summaries),
        report,
        verdict,
        tampered,
        opts.baseline,
        ready,
    )
