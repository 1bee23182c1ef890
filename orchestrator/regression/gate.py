"""The gate: which cells of a regression Report fail a qualification (or a diff), and why.

Pure: a Report in, a frozen ``Verdict`` out; commands only print it. The reasons, in the
order a report lists them:

- ``failing``: a candidate check that is fail, crash or timeout, or ``error`` marked
  tampered, and that passed (or was absent) in the baseline. Always gates.
- ``still_failing``: the same, where the baseline failed too. Gates unless
  ``allow_known_failures``.
- ``slower``: a timing regression (threshold AND significance: rule.py). Always gates.
- ``coverage_lost``: a baseline check missing from the head, or pass → unsupported,
  partial or skip. Gates when ``gate_coverage`` (qualify's default; ``diff --gate-coverage``).

A live known issue excuses any of them (the cell is EXPECTED, never listed here). Exit 1
when a reason gates, else 3 with infrastructure errors (nothing proved), else 0.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..spec import COUNTED, COVERAGE_LOST, EXPECTED, FAILING, SLOWER
from .rule import CellChange, Report

FAILING_REASON, STILL_FAILING, SLOWER_REASON, COVERAGE_REASON = (
    "failing",
    "still_failing",
    "slower",
    "coverage_lost",
)
TITLES = {
    STILL_FAILING: "still failing (failed in the baseline too)",
    FAILING_REASON: "failing in the candidate",
    SLOWER_REASON: "timing regressions",
    COVERAGE_REASON: "coverage lost (missing, or pass → unsupported/partial/skip)",
}
ORDER = (
    STILL_FAILING,
    FAILING_REASON,
    SLOWER_REASON,
    COVERAGE_REASON,
)  # still failing is listed first
SHOWN = 5  # check ids named per reason in the verdict block


@dataclass(frozen=True)
class Reason:
    code: str  # one of ORDER
    changes: tuple[CellChange, ...]
    gates: bool  # False: listed, but allowed by a flag (--allow-known-failures, no --gate-coverage)
    allowed_by: str = ""  # the flag that allows it

    @property
    def title(self) -> str:
        return TITLES[self.code]

    @property
    def checks(self) -> tuple[str, ...]:
        return tuple(f"{c.env}: {c.check}" for c in self.changes)

    def counted(self) -> str:
        """ "2 failing (1 regressed)": the count, and for failing checks how many passed in
        the baseline (a regression), so no other word has to say it."""
        said = f"{len(self.changes)} {self.code.replace('_', ' ')}"
        if self.code == FAILING_REASON:
            said += f" ({sum(1 for c in self.changes if c.base == 'pass')} regressed)"
        return said

    def line(self, shown: int = SHOWN) -> str:
        names = ", ".join(self.checks[:shown]) + (
            f", … (+{len(self.changes) - shown})" if len(self.changes) > shown else ""
        )
        allowed = f" [not gated: {self.allowed_by}]" if not self.gates else ""
        return f"{len(self.changes)} {self.title}{allowed}: {names}"


@dataclass(frozen=True)
class Verdict:
    """Qualified or not, the exit code, and every reason (gating or allowed)."""

    exit_code: int
    reasons: tuple[Reason, ...]
    infra_errors: bool = False
    excused: int = 0  # cells a known issue excused (EXPECTED)
    subject: str = "qualify"  # qualify | diff: the words of the verdict

    @property
    def word(self) -> str:
        """ "qualified" / "NOT QUALIFIED" (qualify), "gate passed" / "GATE FAILED" (diff)."""
        if self.subject == "diff":
            return "gate passed" if self.qualified else "GATE FAILED"
        return "qualified" if self.qualified else "NOT QUALIFIED"

    @property
    def qualified(self) -> bool:
        return self.exit_code == 0

    @property
    def gating(self) -> tuple[Reason, ...]:
        return tuple(r for r in self.reasons if r.gates)

    def failing_cells(self) -> frozenset[tuple[str, str]]:
        """(environment, check) of every cell that fails the gate: JUnit ``<failure>``."""
        return frozenset((c.env, c.check) for r in self.gating for c in r.changes)

    def why(self) -> str:
        """What decided the exit, with the counts that decided it, in the words every sink
        uses (terminal, Markdown, HTML, JSON, JUnit, notifications): the gating reasons'
        counts ("1 still failing; 2 coverage lost"), then those a flag allows, marked "(not
        gated: FLAG)"; never a word of its own that a count could contradict."""
        gating = "; ".join(r.counted() for r in self.gating)
        allowed = "; ".join(
            f"{r.counted()} (not gated: {r.allowed_by})" for r in self.reasons if not r.gates
        )
        counted = "; ".join(x for x in (gating, allowed) if x)
        if self.exit_code == 3 and not gating:
            inconclusive = "infrastructure errors, the affected checks are inconclusive"
            return f"{inconclusive}; {counted}" if counted else inconclusive
        return counted or "nothing failing, no regression, no coverage lost"

    def headline(self) -> str:
        return f"{self.word.lower()}: {self.why()}"

    def lines(self, shown: int = SHOWN) -> tuple[str, ...]:
        return tuple(r.line(shown) for r in self.reasons)


def unexcused_failure(c: CellChange) -> bool:
    """A candidate check that failed (or was tampered with) and no live known issue excuses."""
    return c.kind != EXPECTED and (c.head in FAILING or c.tampered)


def _reason_of(c: CellChange) -> str | None:
    if unexcused_failure(c):
        return STILL_FAILING if c.base in FAILING else FAILING_REASON
    if c.kind == SLOWER:
        return SLOWER_REASON
    if c.kind == COVERAGE_LOST:
        return COVERAGE_REASON
    if c.kind in COUNTED:  # a counted kind the rule may add: never silently qualified
        return FAILING_REASON
    return None


def decide(
    report: Report,
    gate_coverage: bool = True,
    allow_known_failures: bool = False,
    infra_errors: bool = False,
    coverage_flag: str = "--allow-coverage-loss",
    subject: str = "qualify",
) -> Verdict:
    """The gate over one report (qualify: coverage gates unless --allow-coverage-loss; diff:
    only with --gate-coverage). ``coverage_flag``: what the report says allowed the loss."""
    found: dict[str, list[CellChange]] = {code: [] for code in ORDER}
    for c in report.changes:
        code = _reason_of(c)
        if code is not None:
            found[code].append(c)
    allowed = {
        STILL_FAILING: "" if not allow_known_failures else "--allow-known-failures",
        COVERAGE_REASON: "" if gate_coverage else coverage_flag,
    }
    reasons = tuple(
        Reason(code, tuple(found[code]), not allowed.get(code), allowed.get(code, ""))
        for code in ORDER
        if found[code]
    )
    exit_code = 1 if any(r.gates for r in reasons) else 3 if infra_errors else 0
    return Verdict(
        exit_code,
        reasons,
        infra_errors,
        sum(1 for c in report.changes if c.kind == EXPECTED),
        subject,
    )


__all__ = ["ORDER", "TITLES", "Reason", "Verdict", "decide", "unexcused_failure"]
