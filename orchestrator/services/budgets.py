"""Suite tiers and time budgets: before a batch runs, each (image, suite) whose suite has a
budget (its own, or its tier's: smoke 5 min, nightly 30 min, full 2 h per image) is
estimated from its stored duration (the plan's history, the one the ETA uses); one over its
budget is a warning that says by how much."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


def _clock(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f}s"
    if seconds < 7200:
        return f"{seconds / 60:.1f}m"
    return f"{seconds / 3600:.1f}h"


def over_budget(planned: Sequence[Any], history: Mapping[tuple[str, str], float]) -> list[str]:
    """One warning per (image, suite) whose last stored duration exceeds its budget."""
    out: list[str] = []
    seen: set[tuple[str, str]] = set()
    for pr in planned:
        for task in pr.tasks:
            key = (task.image.alias, task.suite.name)
            budget = task.suite.time_budget
            if budget is None or key in seen:
                continue
            seen.add(key)
            took = history.get(key)
            if took is not None and took > budget:
                tier = f"{task.suite.tier} " if task.suite.tier else ""
                out.append(
                    f"suite {task.suite.name} on {task.image.alias} is estimated at "
                    f"{_clock(took)} (its last run), over its {tier}budget of {_clock(budget)} "
                    f"by {_clock(took - budget)}: split it, move it to a longer tier, or raise "
                    "its budget"
                )
    return out
