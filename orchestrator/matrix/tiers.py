"""Support tiers per platform/backend from pass rates, under a stated policy (pure)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields
from datetime import datetime
from typing import Any

from .model import Cell

TOO_FEW = "too few runs"
TIERS = ("first-class", "best-effort", "experimental", "unsupported", TOO_FEW)
#: what a pass rate counts (docs/statuses.md): a pass passes; partial support, failures and flaky
#: checks do not. Unsupported (not installed), skip, n/a, known issues (xfail) and harness errors
#: are counted nowhere: they say nothing about how well the platform works.
COUNTED = ("pass", "partial", "fail", "crash", "timeout", "flaky")


@dataclass(frozen=True)
class Policy:
    first_class_min_pass: float = 0.98
    first_class_max_crashes: int = 0
    best_effort_min_pass: float = 0.80
    experimental_min_pass: float = 0.0  # strictly greater than this
    # a tier is a claim about a platform over time: fewer runs, or runs over a shorter span,
    # are "too few runs" (with what is missing), never a tier
    min_runs: int = 3
    min_span_days: float = 1.0

    @classmethod
    def from_mapping(cls, data: Any) -> Policy:
        """From a YAML mapping; unknown keys and out-of-range values are ValueError."""
        if data is None:
            return cls()
        if not isinstance(data, dict):
            raise ValueError(
                "a tier policy is a mapping of " + ", ".join(f.name for f in fields(cls))
            )
        known = {f.name: f for f in fields(cls)}
        for key in data:
            if key not in known:
                raise ValueError(f"unknown tier policy key '{key}' (known: {', '.join(known)})")
        values: dict[str, Any] = {}
        for key, value in data.items():
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise ValueError(f"tier policy key '{key}' must be a number, not {value!r}")
            if key.endswith("_pass") and not 0 <= value <= 1:
                raise ValueError(
                    f"tier policy key '{key}' is a fraction between 0 and 1, not {value}"
                )
            if value < 0:
                raise ValueError(f"tier policy key '{key}' cannot be negative, not {value}")
            values[key] = int(value) if key.endswith(("crashes", "runs")) else float(value)
        return cls(**values)

    def describe(self) -> str:
        return (
            f"Tier policy: first-class ≥ {self.first_class_min_pass:.0%} pass and ≤ "
            f"{self.first_class_max_crashes} crashes or timeouts; best-effort ≥ {self.best_effort_min_pass:.0%} "
            f"pass; experimental > {self.experimental_min_pass:.0%} pass; otherwise unsupported. "
            "Pass rate = passing checks / checks with a verdict: partial support, failures and flaky "
            "checks count as not passing; unsupported (not installed), skipped, not applicable, "
            "waived failures and harness errors are not counted. A tier needs at least "
            f"{self.min_runs} run(s) over at least {self.min_span_days:g} day(s); "
            f"with fewer it is '{TOO_FEW}'."
        )

    def sample_short(self, runs: int, span_days: float) -> str | None:
        """What the sample lacks for a tier ("2 runs over 0.1 days; a tier needs 3 runs over
        1 day"), or None when it is large enough."""
        if runs >= self.min_runs and span_days >= self.min_span_days:
            return None
        return (
            f"{runs} run{'s' if runs != 1 else ''} over {span_days:.1f} days; a tier needs "
            f"{self.min_runs} over {self.min_span_days:g} day(s)"
        )


@dataclass(frozen=True)
class TierRow:
    group: str
    tier: str
    passed: int
    counted: int
    crashes: int
    runs: tuple[str, ...]
    short: str | None = None  # what the sample lacks (tier TOO_FEW), else None

    @property
    def rate(self) -> float:
        return self.passed / self.counted if self.counted else 0.0


def tier_of(passed: int, counted: int, crashes: int, policy: Policy) -> str:
    if not counted:
        return "unsupported"
    rate = passed / counted
    if rate >= policy.first_class_min_pass and crashes <= policy.first_class_max_crashes:
        return "first-class"
    if rate >= policy.best_effort_min_pass:
        return "best-effort"
    return "experimental" if rate > policy.experimental_min_pass else "unsupported"


def tiers(
    groups: Mapping[str, Iterable[Cell]],
    policy: Policy,
    ended: Mapping[str, datetime | None] | None = None,
) -> list[TierRow]:
    """groups: platform/backend → the cells (one per check and image) that speak for it;
    ``ended``: run id → when it ended (the sample's time span)."""
    out = []
    for group, cells in groups.items():
        cells = list(cells)
        counted = [c for c in cells if c.verdict in COUNTED]
        passed = sum(c.verdict == "pass" for c in counted)
        crashes = sum(c.verdict in ("crash", "timeout") for c in counted)
        runs = tuple(sorted({r for c in cells for r in c.runs}))
        whens = [w for w in ((ended or {}).get(r) for r in runs) if w is not None]
        span = (max(whens) - min(whens)).total_seconds() / 86400 if whens else 0.0
        short = policy.sample_short(len(runs), span)
        tier = TOO_FEW if short else tier_of(passed, len(counted), crashes, policy)
        out.append(TierRow(group, tier, passed, len(counted), crashes, runs, short))
    return out
