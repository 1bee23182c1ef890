"""The gate: which cells of a regression Report fail a qualification (or a diff), and why.

Pure: a Report (and what a further gate decided elsewhere) in, a frozen ``Verdict`` out;
every sink (exit code, terminal, Markdown, HTML, JUnit, JSON, qualify.json, notification,
attestation) renders that one object. The reasons, in the order a report lists them:

- ``nothing_to_judge`` (qualify): no check of the candidate ran to a verdict (no results,
  an empty selection, every check skipped, unsupported or not applicable). Gates unless
  ``allow_empty`` (``--allow-empty``): no evidence is not a pass.
- ``failing``: a candidate check that is fail, crash or timeout, or ``error`` marked
  tampered, and that did not fail in the baseline: a regression (it passed there), a new
  failure (the baseline did not have it), or one whose definition changed (not comparable,
  still a failure of the candidate). Always gates.
- ``still_failing``: the same, where the baseline failed too. Gates unless
  ``allow_known_failures``.
- ``tampered``: checks whose output was tampered with or cut at the output cap that no
  other reason names (a known issue cannot excuse forged evidence). Always gates.
- ``slower``: a timing regression (threshold AND significance: rule.py). Always gates.
- ``coverage_lost``: a baseline check missing from the head, or pass → unsupported,
  partial or skip. Gates when ``gate_coverage`` (qualify's default; ``diff --gate-coverage``).
- ``readiness`` (``qualify --readiness``): the readiness gate's own answer
  (services/readiness.py decides it; here it is one more reason). Gates when it said no.

A live known issue excuses a failure (the cell is EXPECTED, never listed here; counted as
excused and said in the headline). Exit 1 when a reason gates, else 3 with infrastructure
errors (nothing proved), else 0.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from ..spec import (
    COUNTED,
    COVERAGE_GAINED,
    COVERAGE_LOST,
    EXPECTED,
    FAILING,
    NEW_FAILURE,
    NOT_COMPARABLE,
    SLOWER,
)
from .rule import CellChange, Report

FAILING_REASON, STILL_FAILING = "failing", "still_failing"
SLOWER_REASON, COVERAGE_REASON = "slower", "coverage_lost"
NOTHING_REASON, TAMPERED_REASON, READINESS_REASON = "nothing_to_judge", "tampered", "readiness"
TITLES = {
    NOTHING_REASON: "nothing to judge",
    STILL_FAILING: "still failing (failed in the baseline too)",
    FAILING_REASON: "failing in the candidate",
    TAMPERED_REASON: "tampered with or cut at the output cap",
    SLOWER_REASON: "timing regressions",
    COVERAGE_REASON: "coverage lost (missing, or pass → unsupported/partial/skip)",
    READINESS_REASON: "not ready (readiness)",
}
ORDER = tuple(TITLES)  # the order reasons are listed in: still failing first of the failures
SHOWN = 5  # check ids named per reason in the verdict block
NOT_JUDGED = ("", "skip", "unsupported", "n/a", "missing")  # a head verdict that proves nothing
ALLOW_EMPTY = "--allow-empty"


@dataclass(frozen=True)
class Further:
    """A gate decided elsewhere whose answer this one takes as a reason (readiness): its
    exit code (0 said yes), why, and the cells it names."""

    name: str
    code: int
    reason: str
    cells: tuple[str, ...] = ()


@dataclass(frozen=True)
class Counts:
    """The counts a decision rests on, in every sink the same. ``failing``: the candidate's
    unexcused failing checks, of which ``regressed`` passed in the baseline, ``new_failures``
    were not in it and ``still_failing`` failed there too; ``excused``: cells a live known
    issue excused (``excused_failing`` of them failing ones); ``judged``: candidate checks
    that ran to a verdict."""

    # the counts a sink shows, in the order it shows them
    failing: int = 0
    regressed: int = 0
    new_failures: int = 0
    still_failing: int = 0
    excused: int = 0
    slower: int = 0
    coverage_lost: int = 0
    coverage_gained: int = 0
    # the counts the headline and the gate read, never shown on their own
    excused_failing: int = 0
    judged: int = 0

    def as_dict(self) -> dict[str, int]:
        return {k: v for k, v in asdict(self).items() if k not in ("excused_failing", "judged")}

    def said(self) -> str:
        """ "failing 1, regressed 0, new failures 1, …": every count, in words."""
        words = {"excused": "excused by waivers"}
        return ", ".join(
            f"{words.get(k, k.replace('_', ' '))} {n}" for k, n in self.as_dict().items()
        )


@dataclass(frozen=True)
class Reason:
    code: str  # one of ORDER
    changes: tuple[CellChange, ...]
    gates: bool  # False: listed, but allowed by a flag (--allow-known-failures, no --gate-coverage)
    allowed_by: str = ""  # the flag that allows it
    named: tuple[str, ...] = ()  # the cells of a reason with no CellChange (readiness, tampered)
    said: str = ""  # what it says instead of a count (nothing to judge, readiness)

    @property
    def title(self) -> str:
        return TITLES[self.code]

    @property
    def checks(self) -> tuple[str, ...]:
        return tuple(f"{c.env}: {c.check}" for c in self.changes) + self.named

    @property
    def size(self) -> int:
        return len(self.changes) or len(self.named)

    def counted(self) -> str:
        """ "2 failing (1 regressed, 1 new failure)": the count, and for failing checks how many
        passed in the baseline (a regression) and how many it did not have, so no other
        word has to say it."""
        if self.said:
            return f"{self.title}: {self.said}"
        said = f"{self.size} {self.code.replace('_', ' ')}"
        if self.code == FAILING_REASON:
            new = sum(1 for c in self.changes if c.kind == NEW_FAILURE)
            said += f" ({sum(1 for c in self.changes if regressed(c))} regressed"
            said += f", {new} new failure{'s' if new != 1 else ''})" if new else ")"
        return said

    def line(self, shown: int = SHOWN) -> str:
        names = ", ".join(self.checks[:shown]) + (
            f", … (+{len(self.checks) - shown})" if len(self.checks) > shown else ""
        )
        allowed = f" [not gated: {self.allowed_by}]" if not self.gates else ""
        if self.said:
            return f"{self.title}{allowed}: {self.said}" + (f": {names}" if names else "")
        return f"{self.size} {self.title}{allowed}: {names}"


@dataclass(frozen=True)
class Verdict:
    """Qualified or not, the exit code, every reason (gating or allowed) with the cells
    behind it, and the counts: the one decision every sink renders."""

    exit_code: int
    reasons: tuple[Reason, ...]
    infra_errors: bool = False
    excused: int = 0  # cells a known issue excused (EXPECTED)
    subject: str = "qualify"  # qualify | diff: the words of the verdict
    counts: Counts = field(default_factory=Counts)

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
        gated: FLAG)", then what waivers excused ("1 failing, excused by
        waivers"); never a word of its own that a count could contradict."""
        gating = "; ".join(r.counted() for r in self.gating)
        allowed = "; ".join(
            f"{r.counted()} (not gated: {r.allowed_by})" for r in self.reasons if not r.gates
        )
        n, parts = self.counts, []
        if n.excused_failing:
            parts.append(f"{n.excused_failing} failing, excused by waivers")
        if self.excused > n.excused_failing:
            parts.append(f"{self.excused - n.excused_failing} coverage lost, excused by waivers")
        excused = "; ".join(parts)
        counted = "; ".join(x for x in (gating, allowed, excused) if x)
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


def regressed(c: CellChange) -> bool:
    """A failing check that passed in the baseline under the same definition (a check whose
    definition changed is not comparable: failing, not regressed)."""
    return unexcused_failure(c) and c.base == "pass" and c.kind != NOT_COMPARABLE


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


def _counts(report: Report, found: dict[str, list[CellChange]]) -> Counts:
    failing = [*found[FAILING_REASON], *found[STILL_FAILING]]
    excused = [c for c in report.changes if c.kind == EXPECTED]
    return Counts(
        failing=len(failing),
        regressed=sum(1 for c in failing if regressed(c)),
        new_failures=sum(1 for c in failing if c.kind == NEW_FAILURE),
        still_failing=len(found[STILL_FAILING]),
        excused=len(excused),
        excused_failing=sum(1 for c in excused if c.head in FAILING or c.tampered),
        coverage_lost=len(found[COVERAGE_REASON]),
        coverage_gained=sum(1 for c in report.changes if c.kind == COVERAGE_GAINED),
        slower=len(found[SLOWER_REASON]),
        judged=sum(1 for c in report.changes if c.head not in NOT_JUDGED),
    )


def _nothing(report: Report, counts: Counts) -> str:
    """What is missing when the candidate proved nothing ("" when it proved something)."""
    if counts.judged:
        return ""
    if not report.head.observations:
        return "the candidate has no results (no check selected, or none ran)"
    n = len({(c.env, c.check) for c in report.changes if c.head})
    return (
        f"none of the candidate's {n} check{'s' if n != 1 else ''} ran to a verdict "
        "(every one skipped, unsupported or not applicable)"
    )


def decide(  # noqa: PLR0913 - one argument per input of the decision
    report: Report,
    gate_coverage: bool = True,
    allow_known_failures: bool = False,
    infra_errors: bool = False,
    coverage_flag: str = "--allow-coverage-loss",
    subject: str = "qualify",
    *,
    tampered: tuple[str, ...] = (),
    further: tuple[Further, ...] = (),
    require_evidence: bool = False,
    allow_empty: bool = False,
) -> Verdict:
    """The gate over one report (qualify: coverage gates unless --allow-coverage-loss; diff:
    only with --gate-coverage). ``coverage_flag``: what the report says allowed the loss.
    ``tampered``: checks the run found tampered with or cut at the output cap (they gate
    whatever excuses them); ``further``: gates decided elsewhere (readiness), each a reason
    when it said no; ``require_evidence`` (qualify): a candidate that proved nothing is not
    qualified unless ``allow_empty``."""
    found: dict[str, list[CellChange]] = {code: [] for code in ORDER}
    for c in report.changes:
        code = _reason_of(c)
        if code is not None:
            found[code].append(c)
    allowed = {
        STILL_FAILING: "" if not allow_known_failures else "--allow-known-failures",
        COVERAGE_REASON: "" if gate_coverage else coverage_flag,
        NOTHING_REASON: ALLOW_EMPTY if allow_empty else "",
    }
    counts = _counts(report, found)
    reasons = [
        Reason(code, tuple(found[code]), not allowed.get(code), allowed.get(code, ""))
        for code in ORDER
        if found[code]
    ]
    nothing = _nothing(report, counts) if require_evidence else ""
    if nothing:  # listed first, as ORDER ranks it
        said = nothing + ("" if allow_empty else f"; {ALLOW_EMPTY} accepts it knowingly")
        gates = not allow_empty
        reasons.append(Reason(NOTHING_REASON, (), gates, allowed[NOTHING_REASON], said=said))
    named = {c.check for r in reasons if r.gates for c in r.changes}
    left = tuple(dict.fromkeys(t for t in tampered if t not in named))
    if left:
        reasons.append(Reason(TAMPERED_REASON, (), True, named=left))
    for g in further:
        if g.code != 0:
            reasons.append(Reason(READINESS_REASON, (), True, named=g.cells, said=g.reason))
    ordered = tuple(sorted(reasons, key=lambda r: ORDER.index(r.code)))
    exit_code = 1 if any(r.gates for r in ordered) else 3 if infra_errors else 0
    return Verdict(exit_code, ordered, infra_errors, counts.excused, subject, counts)
