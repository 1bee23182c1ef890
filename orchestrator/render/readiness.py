"""A readiness report as text (terminal), Markdown or JSON: red cells first, each with its
pass counts on both sides, p and q, its triage and any acceptance beside it."""

from __future__ import annotations

import json
from typing import Any

from .. import encode

RED, GREEN, THIN = "red", "green", "not enough runs"  # regression/readiness.py's states


def _cells(report: Any) -> list[Any]:
    order = {RED: 0, THIN: 1, GREEN: 2}
    return sorted(report.cells, key=lambda c: (order[c.state], c.check, c.env.label))


def _rate(c: Any) -> str:
    return f"{c.passed}/{c.total}" if c.total else "0/0"


def _p(value: float | None) -> str:
    return "-" if value is None else f"{value:.3g}"


def as_dict(report: Any) -> dict[str, Any]:
    return {
        "job": report.job,
        "basis": report.basis,
        "window": {"start": report.start.isoformat(), "end": report.end.isoformat()},
        "alpha": report.alpha,
        "min_runs": report.min_runs,
        "min_runs_why": report.why_min,
        "candidate_runs": len(report.candidate_runs),
        "basis_runs": len(report.basis_runs),
        "red": len(report.red),
        "gating": len(report.gating),
        "cells": [_cell(report, c) for c in _cells(report)],
    }


def _cell(report: Any, c: Any) -> dict[str, Any]:
    key = (c.check, c.env.label)
    t = report.triage.get(key)
    return {
        "check": c.check,
        "env": {
            "alias": c.env.alias,
            "family": c.env.family,
            "backend": c.env.backend,
            "arch": c.env.arch,
        },
        "state": c.state,
        "candidate": {"passed": c.candidate.passed, "runs": c.candidate.total},
        "basis": {"passed": c.basis.passed, "runs": c.basis.total},
        "p": c.p,
        "q": c.q,
        "reason": c.reason,
        "triage": {"class": t.cls, "reason": t.reason, "runs": list(t.runs)} if t else None,
        "accepted": report.accepted.get(key),
    }


def render_json(report: Any) -> str:
    return json.dumps(as_dict(report), indent=2, sort_keys=True) + "\n"


def _accept_note(a: dict[str, Any] | None) -> str:
    if not a:
        return ""
    said = f"accepted by {a['by']} until {a['until']}"
    if a.get("expected_rate") is not None:
        said += f" at ≥ {a['expected_rate']:.0%}"
    said += f": {a['reason']}"
    return said if a.get("live") else f"{said} — no longer holds: {a['why']}"


def render_text(report: Any) -> str:
    lines = [
        f"readiness of job {report.job}: {len(report.candidate_runs)} run(s) "
        f"{report.start:%Y-%m-%d %H:%M} – {report.end:%Y-%m-%d %H:%M} against {report.basis} "
        f"({len(report.basis_runs) or 'published'} run(s))",
        f"α = {report.alpha:g}, Benjamini–Hochberg over the cells tested; {report.why_min}",
        "",
    ]
    for c in _cells(report):
        head = f"{c.state.upper():>15}  {c.check}  {c.env.label}  "
        head += f"candidate {_rate(c.candidate)}  basis {_rate(c.basis)}"
        if c.p is not None:
            head += f"  p={_p(c.p)} q={_p(c.q)}"
        lines.append(head)
        t = report.triage.get((c.check, c.env.label))
        if c.state == RED and t:
            lines.append(f"{'':>17}triage: {t.cls}: {t.reason}")
        note = _accept_note(report.accepted.get((c.check, c.env.label)))
        if c.state == RED and note:
            lines.append(f"{'':>17}{note}")
        if c.state == THIN:
            lines.append(f"{'':>17}{c.reason}")
    counts = {s: sum(1 for c in report.cells if c.state == s) for s in (RED, GREEN, THIN)}
    lines += ["", ", ".join(f"{n} {s}" for s, n in counts.items())]
    return encode.terminal("\n".join(lines)) + "\n"


def render_md(report: Any) -> str:
    lines = [
        f"# Readiness of job {encode.markdown(report.job)}",
        "",
        f"{len(report.candidate_runs)} run(s) from {report.start:%Y-%m-%d %H:%M} to "
        f"{report.end:%Y-%m-%d %H:%M} against {encode.markdown(report.basis)}; α = {report.alpha:g}, "
        f"Benjamini–Hochberg over the cells tested. {encode.markdown(report.why_min)}.",
        "",
        "| state | check | environment | candidate | basis | p | q | triage | acceptance |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for c in _cells(report):
        t = report.triage.get((c.check, c.env.label))
        lines.append(
            "| "
            + " | ".join(
                encode.markdown(x)
                for x in (
                    c.state,
                    c.check,
                    c.env.label,
                    _rate(c.candidate),
                    _rate(c.basis),
                    _p(c.p),
                    _p(c.q),
                    f"{t.cls}: {t.reason}" if t and c.state == RED else "",
                    _accept_note(report.accepted.get((c.check, c.env.label))),
                )
            )
            + " |"
        )
    return "\n".join(lines) + "\n"


RENDERERS = {"term": render_text, "md": render_md, "json": render_json}
