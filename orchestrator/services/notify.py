"""What diff and qualify tell their --notify targets: a Report → a notify.message.Outcome."""

from __future__ import annotations

from typing import Any

from ..diff import COUNTED
from ..notify.message import Outcome, Regression
from ..render.diff import _timing_text
from ..render.repro import command


def from_report(report: Any, title: str, images: dict[str, dict[str, Any]], infra: bool = False,
                report_path: str = "") -> Outcome:
    """The outcome of a diff Report: its counted regressions (new by construction: what
    passed in the base), each with the command that re-runs it on the head's image.
    ``images``: head environment → {alias, reference, digest, local, host, cpu_only}."""
    regs = []
    for c in report.changes:
        if c.kind not in COUNTED:
            continue
        env = c.env.split(" → ")[-1]
        img = images.get(env) or {"alias": env, "reference": env, "digest": None}
        regs.append(Regression(c.env, c.check, _timing_text(c) or f"{c.base} → {c.head}" + (f": {c.note}" if c.note
                                                                                            else ""),
                               command(check=c.check, **img)))
    counts = ", ".join(f"{k} {v}" for k, v in sorted(report.counts.items()) if k != "same")
    return Outcome(title, len(report.head.observations), tuple(regs), infra, f"counts: {counts or 'no change'}",
                   report_path)
