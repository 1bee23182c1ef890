"""Support tiers per platform/backend from pass rates, under a stated policy (pure)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields
from typing import Any

from .model import Cell

TIERS = ("first-class", "best-effort", "experimental", "unsupported")
COUNTED = ("pass", "fail", "crash", "timeout", "unsupported", "flaky", "xfail")


@dataclass(frozen=True)
class Policy:
    first_class_min_pass: float = 0.98
    first_class_max_crashes: int = 0
    best_effort_min_pass: float = 0.80
    experimental_min_pass: float = 0.0  # strictly greater than this

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
            values[key] = int(value) if key.endswith("crashes") else float(value)
        return cls(**values)

    def describe(self) -> str:
        return (
            f"Tier policy: first-class ≥ {self.first_class_min_pass:.0%} pass and ≤ "
            f"{self.first_class_max_crashes} crashes or timeouts; best-effort ≥ {self.best_effort_min_pass:.0%} "
            f"pass; experimental > {self.experimental_min_pass:.0%} pass; otherwise unsupported. "
            "Pass rate = passing checks / checks with a verdict (harness errors and skips are not counted)."
        )


@dataclass(frozen=True)
class TierRow:
    group: str
    tier: str
    passed: int
    counted: int
    crashes: int
    runs: tuple[str, ...]

    @property
    def rate(self) -> float:
        return self.passed / self.counted if self.counted else 0.0


def tier_of(passed: int, counted: int, crashes: int, policy: Policy) -> str:
    rate = passed / counted if counted else 0.0
    if (
        counted
        and rate >= policy.first_class_min_pass
        and crashes <= policy.first_class_max_crashes
    ):
        return "first-class"
    if counted and rate >= policy.best_effort_min_pass:
        return "best-effort"
    if counted and rate > policy.experimental_min_pass:
        return "experimental"
    return "unsupported"


def tiers(groups: Mapping[str, Iterable[Cell]], policy: Policy) -> list[TierRow]:
    """groups: platform/backend → the cells (one per check and image) that speak for it."""
    out = []
    for group, cells in groups.items():
        cells = list(cells)
        counted = [c for c in cells if c.verdict in COUNTED]
        passed = sum(c.verdict == "pass" for c in counted)
        crashes = sum(c.verdict in ("crash", "timeout") for c in counted)
        runs = tuple(sorted({r for c in cells for r in c.runs}))
        out.append(
            TierRow(
                group,
                tier_of(passed, len(counted), crashes, policy),
                passed,
                len(counted),
                crashes,
                runs,
            )
        )
    return out
