"""Stored results → a compatibility Matrix (pure: no I/O, no SQL).

A cell is the verdict for one check (or feature) in one environment, in the
vocabulary of DESIGN.md: ✅ pass, ❌ fail/crash/timeout/unsupported, ⚠️
inconclusive (error), flaky (mixed attempts) or expected (xfail), blank for skip.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable

FAILING = ("fail", "crash", "timeout")
SYMBOL = {"pass": "✅", "fail": "❌", "crash": "❌", "timeout": "❌", "unsupported": "❌",
          "error": "⚠️", "xfail": "⚠️", "flaky": "⚠️", "skip": "", "missing": "—"}
LEGEND = ("✅ pass · ❌ fail, crash, timeout or unsupported · ⚠️ inconclusive (harness error), "
          "flaky (mixed attempts) or known issue · blank: skipped · —: not run")


@dataclass(frozen=True)
class Observation:
    """One attempt of one check in one environment, as read from the store."""

    column: str
    check: str
    feature: str
    kind: str
    library: str | None
    status: str
    attempt: int
    run_id: str
    message: str = ""


@dataclass(frozen=True)
class Cell:
    verdict: str  # pass | fail | crash | timeout | unsupported | error | xfail | skip | flaky | missing
    statuses: tuple[str, ...] = ()
    runs: tuple[str, ...] = ()
    message: str = ""

    @property
    def symbol(self) -> str:
        return SYMBOL[self.verdict]

    @property
    def text(self) -> str:
        """Symbol plus the word where the symbol alone is ambiguous."""
        if self.verdict in ("pass", "skip", "missing"):
            return self.symbol
        return f"{self.symbol} {self.verdict}".strip()


@dataclass(frozen=True)
class Row:
    key: str
    feature: str
    kind: str
    library: str | None


@dataclass(frozen=True)
class Matrix:
    rows: tuple[Row, ...]
    columns: tuple[str, ...]
    cells: dict[tuple[str, str], Cell] = field(default_factory=dict)

    def cell(self, row: str, column: str) -> Cell:
        return self.cells.get((row, column), Cell("missing"))


def verdict(statuses: Iterable[str]) -> str:
    """The cell verdict for the attempts of one check (in attempt order)."""
    seq = list(statuses)
    if not seq:
        return "missing"
    has_pass = "pass" in seq
    if has_pass and any(s in FAILING for s in seq):
        return "flaky"
    return seq[-1]


def build(observations: Iterable[Observation], columns: Iterable[str] | None = None) -> Matrix:
    """A checks × columns matrix; rows keep the order in which checks first appear."""
    per: dict[tuple[str, str], list[Observation]] = {}
    rows: dict[str, Row] = {}
    cols: list[str] = list(columns or [])
    for obs in observations:
        rows.setdefault(obs.check, Row(obs.check, obs.feature, obs.kind, obs.library))
        if obs.column not in cols:
            cols.append(obs.column)
        per.setdefault((obs.check, obs.column), []).append(obs)
    cells = {}
    for key, obs in per.items():
        obs.sort(key=lambda o: o.attempt)
        last = obs[-1]
        cells[key] = Cell(verdict(o.status for o in obs), tuple(o.status for o in obs),
                          tuple(sorted({o.run_id for o in obs})), last.message)
    return Matrix(tuple(rows.values()), tuple(cols), cells)
