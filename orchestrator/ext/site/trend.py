"""What a check page says under its trend plot: per environment, what the step detector
decided and why, so that a plot never shows a step its text does not mention (pure)."""

from __future__ import annotations

from orchestrator.ext.site.pages import fmt_seconds as _level
from orchestrator.ext.site.views import History
from orchestrator.regression.changepoints import MIN_SIZE
from orchestrator.render.diff import pct

#: runs a history needs before a step can be called: two at each level
NEEDED = 2 * MIN_SIZE
_DIFF_SAID = {
    "noise": "calls it noise (past the threshold but not significant)",
    "same": "finds no change past the threshold",
    "inconclusive": "calls it inconclusive",
    "flaky": "calls the check flaky",
    "not_comparable": "cannot compare them",
    "": "has no timing of the check to compare",
}


def decision(h: History) -> dict[str, str]:
    """{env, decided, why} for one environment's history."""
    n = len(h.points)
    band = f"± {h.threshold * 100:g} %"
    a = h.analysis
    if n < NEEDED or a is None:
        return {
            "env": h.env,
            "decided": "no step called",
            "why": f"too few runs to call a step: {n} run{'s' if n != 1 else ''} here, the "
            f"detector needs at least {NEEDED} (two at each level)",
        }
    lines = []
    for s in a.shifts:
        run = h.points[s.end].run_id
        what = "a step" if s.kind == "step" else f"a drift over {s.steps} steps"
        lines.append(
            f"{s.direction} {pct(s.ratio)} ({what}, {_level(s.before)} → {_level(s.after)}) "
            f"from run {run[:8]}, confirmed by valorch diff of the runs either side"
        )
    for s, kind, base in h.rejected:
        run = h.points[s.end].run_id
        said = _DIFF_SAID.get(kind, f"calls it {kind}")
        lines.append(
            f"the medians move {pct(s.ratio)} ({_level(s.before)} → {_level(s.after)}) at run "
            f"{run[:8]}, but valorch diff {base[:8]} {run[:8]} {said}: not reported as a step"
        )
    if a.shifts:
        return {"env": h.env, "decided": "change detected", "why": "; ".join(lines)}
    if lines:
        return {"env": h.env, "decided": "no step called", "why": "; ".join(lines)}
    levels = len(a.segments)
    if not levels:
        return {"env": h.env, "decided": "no step called", "why": "no positive timing to analyse"}
    why = (
        f"{n} runs at one level ({_level(a.segments[0].level)})"
        if levels <= 1
        else f"{n} runs in {levels} levels, none further than {band} (and its 99 % interval) "
        "from the best level before it"
    )
    return {"env": h.env, "decided": "no step or drift", "why": why}


def decisions(hist: list[History]) -> list[dict[str, str]]:
    return [decision(h) for h in sorted(hist, key=lambda h: h.env)]
