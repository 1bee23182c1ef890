"""Release readiness as OpenShift Sippy's Component Readiness decides it (pure, stdlib only).

Every check × environment is a cell with a candidate count (the sample) and a basis count,
each run counted once by its final verdict. ``classify`` is Sippy's
``buildFisherExactTestStats`` (pkg/api/componentreadiness/component_report.go) with its
defaults (pkg/api/componentreadiness/utils/queryparamparser.go): confidence 95, pity 5
pass-rate points, minimum 3 sample failures, extreme above a 15-point drop; the one-sided
Fisher exact test (the right tail of glycerine/golang-fisher-exact's FisherExactTest on
(sample failures, sample passes, basis failures, basis passes)). ``decide`` folds the cells
into one typed decision: its verdict, exit code, reasons and cells. docs/readiness.md.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from .. import words
from .noise import benjamini_hochberg

# Sippy's defaults (queryparamparser.go parseAdvancedOptions; getRegressionStatus)
CONFIDENCE = 95.0
PITY = 5.0
MIN_FAIL = 3
EXTREME = 15.0

# Sippy's statuses (pkg/apis/api/componentreport/crtest/types.go), worst first
EXTREME_REGRESSION = "extreme regression"
SIGNIFICANT_REGRESSION = "significant regression"
MISSING_SAMPLE = "missing sample"
NOT_SIGNIFICANT = "not significant"
MISSING_BASIS = "missing basis"
MISSING_BOTH = "missing basis and sample"
IMPROVEMENT = "significant improvement"
STATUSES = (
    EXTREME_REGRESSION,
    SIGNIFICANT_REGRESSION,
    MISSING_SAMPLE,
    NOT_SIGNIFICANT,
    MISSING_BASIS,
    MISSING_BOTH,
    IMPROVEMENT,
)
#: the statuses that fail the gate unless a live acceptance covers the cell
FAILING_STATUSES = (EXTREME_REGRESSION, SIGNIFICANT_REGRESSION, MISSING_SAMPLE)
#: a run's final verdict that counts as a pass / as a failure; anything else (error: the
#: harness, skip/unsupported/n/a: nothing measured) is not counted on either side
PASSING = ("pass", "flaky")  # flaky: it passed on a retry (Sippy counts a flake as a pass)
FAILING = ("fail", "crash", "timeout")

READY, NOT_READY = "ready", "not ready"
CORRECTIONS = ("none", "bh")


@dataclass(frozen=True)
class Options:
    """Each of Sippy's knobs, by its flag (docs/readiness.md)."""

    confidence: float = CONFIDENCE  # --confidence, percent in (0, 100)
    pity: float = PITY  # --pity, pass-rate points, >= 0
    min_fail: int = MIN_FAIL  # --min-fail, >= 0 (0: no minimum)
    extreme: float = EXTREME  # --extreme, pass-rate points, >= 0
    correction: str = "none"  # --correction none|bh
    allow_empty: bool = False  # --allow-empty

    @property
    def alpha(self) -> float:
        return 1 - self.confidence / 100


def fisher_less(c_pass: int, c_total: int, b_pass: int, b_total: int) -> float:
    """P(X <= c_pass) for X hypergeometric: c_total draws from c_total + b_total runs, of which
    c_pass + b_pass passed. The one-sided Fisher exact p-value of "the candidate passes less"
    (scipy.stats.fisher_exact([[c_pass, c_fail], [b_pass, b_fail]], alternative="less"))."""
    if not (0 <= c_pass <= c_total and 0 <= b_pass <= b_total):
        raise ValueError("pass counts must lie between 0 and their totals")
    total, passes = c_total + b_total, c_pass + b_pass
    lo = max(0, c_total - (total - passes))
    tail = sum(
        math.comb(passes, x) * math.comb(total - passes, c_total - x) for x in range(lo, c_pass + 1)
    )
    return min(1.0, tail / math.comb(total, c_total))


@dataclass(frozen=True)
class Env:
    """Where a check ran: image alias, its family and backend, the host's GPU arch
    (``amd:gfx942``; ``cpu``; ``*`` where the basis does not say, a published matrix)."""

    alias: str
    backend: str = ""
    arch: str = "*"
    family: str = ""

    @property
    def label(self) -> str:
        """``alias@arch`` (the form ``accept add --env`` takes); the alias alone for ``*``."""
        return self.alias if self.arch in ("*", "") else f"{self.alias}@{self.arch}"


@dataclass(frozen=True)
class Count:
    passed: int = 0
    total: int = 0
    runs: tuple[str, ...] = ()  # the runs counted
    failed_runs: tuple[str, ...] = ()  # the runs whose verdict failed

    @property
    def rate(self) -> float | None:
        return self.passed / self.total if self.total else None


@dataclass(frozen=True)
class Cell:
    check: str
    env: Env
    candidate: Count
    basis: Count
    status: str = NOT_SIGNIFICANT
    p: float | None = None  # the Fisher p-value Sippy computed (None: no test was made)
    q: float | None = None  # with --correction bh: Benjamini–Hochberg over the cells tested
    reason: str = ""
    accepted: bool = False  # a live acceptance covers it: shown, not gating
    notes: tuple[str, ...] = ()  # renamed from, basis looked further back, definition changed

    @property
    def gating(self) -> bool:
        return self.status in FAILING_STATUSES and not self.accepted

    @property
    def shown_status(self) -> str:
        return f"{self.status} (accepted)" if self.accepted else self.status


def count(verdicts: Sequence[tuple[str, str]]) -> Count:
    """(run, final verdict) pairs -> the pass count of the runs that count, one per run."""
    final = dict(verdicts)  # a run named twice counts once, by its last verdict
    counted = [(r, v) for r, v in final.items() if v in PASSING or v in FAILING]
    return Count(
        sum(1 for _r, v in counted if v in PASSING),
        len(counted),
        tuple(r for r, _v in counted),
        tuple(r for r, v in counted if v in FAILING),
    )


def classify(cand: Count, basis: Count, opts: Options = Options()) -> tuple[str, float | None, str]:
    """Sippy's status of one cell, the p-value of the test made (None: none) and why."""
    if cand.total == 0:
        if basis.total == 0:
            return MISSING_BOTH, None, "no counted run on either side"
        return (
            MISSING_SAMPLE,
            None,
            f"the basis passed {basis.passed}/{basis.total}; no candidate run counted",
        )
    if basis.total == 0:
        return MISSING_BASIS, None, f"a new check: {cand.passed}/{cand.total}, nothing to compare"
    fails = cand.total - cand.passed
    said = f"{cand.passed}/{cand.total} against {basis.passed}/{basis.total}"
    if opts.min_fail and fails < opts.min_fail:
        return NOT_SIGNIFICANT, None, f"{said}: {fails} failure(s), fewer than {opts.min_fail}"
    s_rate, b_rate = cand.passed / cand.total, basis.passed / basis.total
    if s_rate >= b_rate:
        p = fisher_less(basis.passed, basis.total, cand.passed, cand.total)
        if p < opts.alpha:
            return IMPROVEMENT, p, f"{said}: p = {p:.3g}"
        return NOT_SIGNIFICANT, p, f"{said}: p = {p:.3g}"
    drop = b_rate - s_rate
    if not drop > opts.pity / 100:
        return NOT_SIGNIFICANT, None, f"{said}: a drop within the pity of {opts.pity:g} points"
    p = fisher_less(cand.passed, cand.total, basis.passed, basis.total)
    if p < opts.alpha:
        status = EXTREME_REGRESSION if drop > opts.extreme / 100 else SIGNIFICANT_REGRESSION
        return status, p, f"{said}: p = {p:.3g}, down {drop * 100:.1f} points"
    return NOT_SIGNIFICANT, p, f"{said}: p = {p:.3g}, not below {opts.alpha:.3g}"


def judge(cells: Sequence[Cell], opts: Options = Options()) -> list[Cell]:
    """Every cell's status; with ``--correction bh`` a significant regression whose q-value is
    not below α becomes not significant, while an extreme one never does."""
    out = []
    for c in cells:
        status, p, why = classify(c.candidate, c.basis, opts)
        out.append(replace(c, status=status, p=p, reason=why))
    if opts.correction != "bh":
        return out
    # a test was made (p): both sides counted runs, so both have a rate
    regress = [
        i
        for i, c in enumerate(out)
        if c.p is not None and (c.candidate.rate or 0) < (c.basis.rate or 0)
    ]
    qs = benjamini_hochberg([out[i].p or 1.0 for i in regress])
    for i, q in zip(regress, qs, strict=True):
        c = out[i]
        hide = c.status == SIGNIFICANT_REGRESSION and not q < opts.alpha
        out[i] = replace(
            c,
            q=q,
            status=NOT_SIGNIFICANT if hide else c.status,
            reason=f"{c.reason}; q = {q:.3g}" + (" (Benjamini–Hochberg)" if hide else ""),
        )
    return out


@dataclass(frozen=True)
class Decision:
    """The gate's one answer: every sink renders this and nothing else."""

    verdict: str  # ready | not ready
    exit_code: int  # 0 | 1
    reasons: tuple[str, ...]
    cells: tuple[Cell, ...]
    untested: int = 0  # cells with no counted run on either side (listed as a count)
    counts: dict[str, int] = field(default_factory=dict)
    gating: tuple[Cell, ...] = ()  # the cells that say no

    @property
    def ready(self) -> bool:
        return self.exit_code == 0


def decide(
    cells: Sequence[Cell],
    candidate_runs: int,
    basis_runs: int,
    opts: Options = Options(),
    accepted: frozenset[tuple[str, str]] = frozenset(),
) -> Decision:
    """Judge ``cells`` (``accepted``: the (check, env label) of cells a live acceptance
    covers) and fail closed: nothing to judge is never "ready" unless --allow-empty."""
    judged = [
        replace(c, accepted=(c.check, c.env.label) in accepted and c.status in FAILING_STATUSES)
        for c in judge(cells, opts)
    ]
    shown = tuple(c for c in judged if c.status != MISSING_BOTH)
    untested = len(judged) - len(shown)
    both = sum(1 for c in shown if c.candidate.total and c.basis.total)
    empty = []
    if candidate_runs == 0:
        empty.append("no candidate runs in the window")
    if basis_runs == 0:
        empty.append("an empty basis: no basis runs")
    if candidate_runs and basis_runs and not both:
        empty.append("no cell was tested: no check × environment has counted runs on both sides")
    reasons: list[str] = []
    if empty and not opts.allow_empty:
        reasons += [f"{e} (accept it knowingly with --allow-empty)" for e in empty]
    # with no candidate run at all, "no candidate runs" is the one reason (not every cell's)
    gating = tuple(c for c in shown if c.gating and candidate_runs)
    reasons += [f"{c.status}: {c.check} {c.env.label}: {c.reason}" for c in gating]
    counts = {s: sum(1 for c in shown if c.status == s) for s in STATUSES if s != MISSING_BOTH}
    counts["accepted"] = sum(1 for c in shown if c.accepted)
    if reasons:
        return Decision(NOT_READY, 1, tuple(reasons), shown, untested, counts, gating)
    said = f"no unaccepted regression or missing sample in {words.count(both, 'cell')} tested"
    if empty:
        said = f"{'; '.join(empty)}: allowed by --allow-empty"
    return Decision(READY, 0, (said,), shown, untested, counts, gating)
