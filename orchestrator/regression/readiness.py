"""Release readiness: the pass rate of every check × environment over a window of runs,
against a basis, with Fisher's exact test (pure, stdlib only).

- ``fisher_less``: the one-sided p-value of Fisher's exact test that the candidate's pass
  rate is lower than the basis's: the exact hypergeometric tail P(X <= candidate passes),
  summed in integers (as scipy.stats.fisher_exact(table, alternative="less")).
- ``min_runs``: the fewest runs a side needs before a regression can be significant at all.
  With n runs on each side, the most extreme table (the candidate fails every run, the basis
  passes every run) has p = 1 / C(2n, n): below the n where that reaches α no test, however
  red the candidate, can reject. At α = 0.05 that is 4 runs (C(6, 3) = 20 gives 0.05, not
  below it; C(8, 4) = 70 gives 0.014).
- ``judge``: every cell red (significantly lower after Benjamini–Hochberg over the cells
  tested, as ``diff`` corrects its timing tests), green, or "not enough runs".
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

from .noise import benjamini_hochberg

ALPHA = 0.05
RED, GREEN, THIN = "red", "green", "not enough runs"
#: a run's final verdict that counts as a pass / as a failure; anything else (error: the
#: harness, skip/unsupported/n/a: nothing measured) is not counted on either side
PASSING = ("pass", "flaky")  # flaky: it passed on a retry (as Sippy counts flakes)
FAILING = ("fail", "crash", "timeout")


def fisher_less(c_pass: int, c_total: int, b_pass: int, b_total: int) -> float:
    """P(X <= c_pass) for X hypergeometric: c_total draws from c_total + b_total runs, of which
    c_pass + b_pass passed. The one-sided Fisher exact p-value of "the candidate passes less"."""
    if not (0 <= c_pass <= c_total and 0 <= b_pass <= b_total):
        raise ValueError("pass counts must lie between 0 and their totals")
    total, passes = c_total + b_total, c_pass + b_pass
    lo = max(0, c_total - (total - passes))
    tail = sum(
        math.comb(passes, x) * math.comb(total - passes, c_total - x) for x in range(lo, c_pass + 1)
    )
    return min(1.0, tail / math.comb(total, c_total))


def smallest_p(n: int) -> float:
    """The smallest one-sided p-value n runs on each side can reach: 1 / C(2n, n)."""
    return 1.0 / math.comb(2 * n, n)


def min_runs(alpha: float) -> int:
    """The fewest runs per side for which some table is significant at ``alpha``."""
    if not 0 < alpha < 1:
        raise ValueError("alpha must lie in (0, 1)")
    n = 1
    while smallest_p(n) >= alpha:
        n += 1
    return n


def why_min(alpha: float) -> str:
    n = min_runs(alpha)
    return (
        f"each side needs at least {n} counted runs: with {n - 1} runs on each side even "
        f"every candidate run failing against every basis run passing gives "
        f"p = 1/C({2 * (n - 1)},{n - 1}) = {smallest_p(n - 1):.3g}, not below α = {alpha:g}"
    )


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
        return f"{self.alias} [{self.backend or '?'}, {self.arch}]"


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
    state: str = GREEN
    p: float | None = None
    q: float | None = None  # Benjamini–Hochberg adjusted over the cells tested
    reason: str = ""


def count(verdicts: Sequence[tuple[str, str]]) -> Count:
    """(run, final verdict) pairs -> the pass count of the runs that count."""
    counted = [(r, v) for r, v in verdicts if v in PASSING or v in FAILING]
    return Count(
        sum(1 for _r, v in counted if v in PASSING),
        len(counted),
        tuple(r for r, _v in counted),
        tuple(r for r, v in counted if v in FAILING),
    )


def judge(cells: Sequence[Cell], alpha: float = ALPHA) -> list[Cell]:
    """Every cell's state: red when its candidate passes significantly less often than its
    basis (q < α after Benjamini–Hochberg over the cells with enough runs), green otherwise,
    not enough runs when a side has fewer than ``min_runs(alpha)`` counted runs."""
    need = min_runs(alpha)
    tested = [i for i, c in enumerate(cells) if c.candidate.total >= need and c.basis.total >= need]
    ps = {
        i: fisher_less(
            cells[i].candidate.passed,
            cells[i].candidate.total,
            cells[i].basis.passed,
            cells[i].basis.total,
        )
        for i in tested
    }
    qs = dict(zip(tested, benjamini_hochberg([ps[i] for i in tested]), strict=True))
    out = []
    for i, c in enumerate(cells):
        if i not in ps:
            side = "candidate" if c.candidate.total < need else "basis"
            got = c.candidate.total if side == "candidate" else c.basis.total
            out.append(
                replace(
                    c, state=THIN, reason=f"the {side} has {got} counted run(s), fewer than {need}"
                )
            )
            continue
        red = qs[i] < alpha
        out.append(
            replace(
                c,
                state=RED if red else GREEN,
                p=ps[i],
                q=qs[i],
                reason=(
                    f"passed {c.candidate.passed}/{c.candidate.total} against "
                    f"{c.basis.passed}/{c.basis.total}: p = {ps[i]:.3g}, q = {qs[i]:.3g}"
                ),
            )
        )
    return out
