"""The bisect report's culprit section: the changed components, most related to the check
first (regression/culprit.py ranks them), as text lines and as JSON-ready dicts."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the regression layer sits above render: only its type is named here
    from ..regression.culprit import Suspect


def _change(s: Suspect) -> str:
    c = s.change
    if c.kind == "added":
        return f"added {c.new}"
    if c.kind == "removed":
        return f"removed (was {c.old})"
    return f"{c.old} -> {c.new}"


def suspects_text(suspects: Sequence[Suspect], note: str, limit: int = 25) -> str:
    """``changed components (inventory diff A -> B), most related to the check first:`` and one
    line per component: rank, tier, name, change, why."""
    if not suspects:
        return note + "\n" if note else ""
    lines = [f"changed components ({note}), most related to the check first:"]
    for i, s in enumerate(suspects[:limit], 1):
        lines.append(f"  {i:>2}. [{s.tier}] {s.change.subject}: {_change(s)}  ({s.why})")
    if len(suspects) > limit:
        lines.append(f"  … and {len(suspects) - limit} more (--json lists them all)")
    return "\n".join(lines) + "\n"


def suspects_json(suspects: Sequence[Suspect]) -> list[dict[str, Any]]:
    return [
        {
            "rank": i,
            "component": s.change.subject,
            "change": s.change.kind,
            "old": s.change.old,
            "new": s.change.new,
            "tier": s.tier,
            "why": s.why,
        }
        for i, s in enumerate(suspects, 1)
    ]
