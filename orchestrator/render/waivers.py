"""The text of a waiver (regression/waivers.py), whichever its source: ``said`` is the one
line every sink shows beside an excused failure (terminal, Markdown, HTML, JUnit, the matrix's
⚑ cell), and ``accept list`` and ``known-issues status`` are written from the decision's own
dict (what ``--json`` prints), so that the text and the JSON cannot disagree."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from .. import encode
from ..words import count

if TYPE_CHECKING:
    from ..regression.waivers import Decision, Waiver


def as_dict(w: Waiver, now: datetime | None = None) -> dict[str, Any]:
    """A waiver as every ``--json`` prints it (with ``state`` and ``live`` when ``now``)."""
    got: dict[str, Any] = {
        "id": w.id or None,
        "source": w.source,
        "check": w.check,
        "env": w.env,
        "backend": w.backend,
        "arch": list(w.arch),
        "status": list(w.status),
        "reason": w.reason,
        "url": w.url,
        "by": w.by,
        "until": w.until.isoformat() if w.until else None,
        "expected_rate": w.expected_rate,
        "created": w.created.isoformat(timespec="seconds") if w.created else None,
        "revoked": None
        if w.revoked is None
        else {
            "by": w.revoked.by,
            "reason": w.revoked.reason,
            "at": w.revoked.at.isoformat(timespec="seconds"),
        },
    }
    if now is not None:
        got["state"] = w.state(now)
        got["live"] = got["state"] == "live"
    return got


def text(d: dict[str, Any]) -> str:
    """The one line beside an excused (or no longer excused) failure, from ``as_dict``:
    ``waived: REASON (URL)``, who accepted it until when for a stored one, and why it no
    longer holds (a link only when it is a plain http(s) one: encode.href)."""
    link = encode.href(d.get("url") or "")
    rate = d.get("expected_rate")
    return (
        f"waived: {d['reason']}"
        + (f" ({link})" if link else "")
        + (f" (accepted by {d['by']} until {d['until']}" if d.get("by") else "")
        + (f" at ≥ {rate:.0%}" if d.get("by") and rate is not None else "")
        + (")" if d.get("by") else "")
        + (f" — no longer holds: {d['why']}" if d.get("live") is False and d.get("why") else "")
    )


def said(w: Waiver) -> str:
    """``text`` of a waiver that excuses."""
    return text(as_dict(w))


def acceptances(rows: Sequence[dict[str, Any]]) -> str:
    """One line per acceptance (and one more for a revoked one: who, when, why)."""
    if not rows:
        return "no acceptances: valorch accept add CHECK --env ENV ... records one"
    lines = []
    for r in rows:
        rev = r["revoked"]
        lines.append(
            f"#{r['id']}  {r['check']}  {r['env']}  through {r['until']}"
            + ("" if r["state"] == "live" else f" ({r['state']})")
            + f"  by {r['by']}"
            + (f"  expected {r['expected_rate']:.0%}" if r["expected_rate"] is not None else "")
            + f": {r['reason']}"
            + (f"\n    revoked by {rev['by']} on {rev['at']} UTC: {rev['reason']}" if rev else "")
        )
    return "\n".join(lines)


def known_issues(rows: Sequence[dict[str, Any]]) -> str:
    """Per known issue: its scope, CAN CLOSE or open, the runs it excused, and why."""
    lines = []
    for s in rows:
        scope = ", ".join(
            x
            for x in (
                f"images {s['images']}" if s["images"] != "*" else "",
                f"backend {s['backend']}" if s["backend"] else "",
                f"arch {'/'.join(s['arch'])}" if s["arch"] else "",
            )
            if x
        )
        excused = s["excused_runs"]
        lines.append(
            f"{s['check']} [{scope or 'unscoped'}]: "
            + ("CAN CLOSE" if s["can_close"] else "open")
            + f"; excused {count(len(excused), 'run')}"
            + (
                f" ({'the newest 5: ' if len(excused) > 5 else ''}"
                f"{', '.join(r[:8] for r in excused[-5:])}{', …' if len(excused) > 5 else ''})"
                if excused
                else ""
            )
        )
        lines.append(f"    {s['why']}")
    return "\n".join(lines) or "no known issues in the file"


def noted(d: Decision) -> dict[str, Any] | None:
    """What a failure shows of the waiver that covers it (``live``: it excuses it)."""
    if d.waiver is None:
        return None
    return {**as_dict(d.waiver), "live": d.excuses, "why": d.why}
