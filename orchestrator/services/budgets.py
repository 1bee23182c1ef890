"""Suite tiers and time budgets: before a batch runs, each (image, suite) whose suite has a
budget (its own, or its tier's: smoke 5 min, nightly 30 min, full 2 h per image) is
estimated from its stored duration (the plan's history, the one the ETA uses); one over its
budget is a warning that says by how much."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any


def _clock(seconds: float) -> str:
    """A duration as a person reads it: sub-second ones to the millisecond or tenth ("0.3s",
    never "0s" for a budget of 0.3 s), seconds below two minutes, then minutes, hours."""
    if seconds < 10:
        return f"{seconds:.2g}s" if seconds < 1 else f"{seconds:.1f}".rstrip("0").rstrip(".") + "s"
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


def used(tasks: Iterable[Any]) -> list[dict[str, Any]]:
    """Per tier with a budget, one run's time used against it: the stored tasks' measured durations
    (``timings.total_s``) summed over the tier's suites, beside the sum of their budgets (each
    suite's own, else its tier's). A suite with a budget and no tier is its own line (tier None)."""
    from ..spec import TIER_BUDGETS

    per: dict[str | None, dict[str, Any]] = {}
    for task in tasks:
        spec = task.suite_spec or {}
        tier = spec.get("tier")
        budget = spec.get("budget") or TIER_BUDGETS.get(tier or "")
        took = (task.timings or {}).get("total_s")
        if budget is None or took is None:
            continue
        line = per.setdefault(tier, {"tier": tier, "used_s": 0.0, "budget_s": 0.0, "suites": []})
        line["used_s"] += float(took)
        line["budget_s"] += float(budget)
        line["suites"].append(task.suite)
    for line in per.values():
        line["used_s"] = round(line["used_s"], 3)
        line["over"] = line["used_s"] > line["budget_s"]
    order = list(TIER_BUDGETS)  # smoke, nightly, full; then a suite's own budget
    return sorted(per.values(), key=lambda x: order.index(x["tier"]) if x["tier"] in order else 3)


def used_line(run_id: str, alias: str, lines: Sequence[dict[str, Any]]) -> str:
    """``budget run 1a2b3c4d (host): smoke 1.6s of 1s (160%, over by 0.6s)``."""
    parts = []
    for x in lines:
        name = x["tier"] or f"suite {', '.join(x['suites'])}"
        pct = 100 * x["used_s"] / x["budget_s"]
        over = f", over by {_clock(x['used_s'] - x['budget_s'])}" if x["over"] else ""
        parts.append(f"{name} {_clock(x['used_s'])} of {_clock(x['budget_s'])} ({pct:.0f}%{over})")
    return f"budget run {run_id[:8]} ({alias}): " + "; ".join(parts)


def streaks(
    runs: Sequence[Mapping[str, Any]],
    tasks: Iterable[tuple[str, str, Mapping[str, Any], Mapping[str, Any]]],
    k: int = 3,
) -> list[str]:
    """Each (job, image, suite) whose last ``k`` or more stored runs in a row (by start) each
    took longer than its budget, as one line for the site; the measured durations are the
    tasks' ``timings.total_s``."""
    from ..spec import TIER_BUDGETS

    info = {r["id"]: r for r in runs}
    per: dict[tuple[str, str, str], list[tuple[Any, str, float, float, str | None]]] = {}
    for run_id, suite, spec, timings in tasks:
        run = info.get(run_id)
        tier = spec.get("tier")
        budget = spec.get("budget") or TIER_BUDGETS.get(tier or "")
        took = timings.get("total_s")
        if run is None or budget is None or took is None:
            continue
        per.setdefault((run["job"], run["alias"], suite), []).append(
            (run["started"], run_id, float(took), float(budget), tier)
        )
    out = []
    for (job, alias, suite), seq in sorted(per.items()):
        seq.sort(key=lambda x: (x[0], x[1]))
        streak = 0
        for _at, _rid, took, budget, _tier in reversed(seq):
            if took <= budget:
                break
            streak += 1
        if streak >= k:
            _at, _rid, took, budget, tier = seq[-1]
            out.append(
                f"suite {suite} on {alias} (job {job}): over its {f'{tier} ' if tier else ''}"
                f"budget of {_clock(budget)} in its last {streak} runs in a row "
                f"(newest {_clock(took)})"
            )
    return out
