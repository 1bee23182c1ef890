"""A readiness report as text (terminal), Markdown or JSON, each rendered from the one
decision (services/readiness.Readiness.decision): its verdict and exit code, its reasons,
then the cells worst first, each with its counts on both sides, p, its triage and any
acceptance. Cells with no counted run on either side are one count, not rows."""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import Any

from .. import encode
from ..words import count, plural
from .waivers import text

ORDER = (  # regression/readiness.py's statuses, worst first (Sippy's order)
    "extreme regression",
    "significant regression",
    "missing sample",
    "significant improvement",
    "missing basis",
    "not significant",
)


def _cells(report: Any) -> list[Any]:
    rank = {s: i for i, s in enumerate(ORDER)}
    return sorted(
        report.decision.cells,
        key=lambda c: (c.accepted, rank.get(c.status, 99), c.check, c.env.label),
    )


def _rate(c: Any) -> str:
    return f"{c.passed}/{c.total}"


def _p(value: float | None) -> str:
    return "-" if value is None else f"{value:.3g}"


def _rules(report: Any) -> str:
    o = report.options
    corr = "Benjamini–Hochberg (never over an extreme drop)" if o.correction == "bh" else "none"
    return (
        f"confidence {o.confidence:g}%, pity {o.pity:g} points, at least {o.min_fail} "
        f"{plural('failure') if o.min_fail != 1 else 'failure'}, extreme above {o.extreme:g} points, multiple-testing correction: {corr}"
    )


def _envs(report: Any) -> list[str]:
    seen: dict[str, str] = {}
    for c in report.decision.cells:
        e = c.env
        bits = [
            b
            for b in (e.backend and f"backend {e.backend}", e.family and f"family {e.family}")
            if b
        ]
        seen.setdefault(e.label, f"{e.label} ({', '.join(bits)})" if bits else e.label)
    return list(seen.values())


def as_dict(report: Any) -> dict[str, Any]:
    d = report.decision
    return {
        "job": report.job,
        "basis": report.basis,
        "window": {"start": report.start.isoformat(), "end": report.end.isoformat()},
        "verdict": d.verdict,
        "exit_code": d.exit_code,
        "reasons": list(d.reasons),
        "options": asdict(report.options),
        "candidate_runs": len(report.candidate_runs),
        "basis_runs": len(report.basis_runs),
        "counts": dict(d.counts),
        "untested": d.untested,
        "gating": len(d.gating),
        "cells": [_cell(report, c) for c in _cells(report)],
    }


def _cell(report: Any, c: Any) -> dict[str, Any]:
    key = (c.check, c.env.label)
    t = report.triage.get(key)
    return {
        "check": c.check,
        "env": {"label": c.env.label, **asdict(c.env)},  # printed with sorted keys
        "status": c.status,
        "accepted": report.accepted.get(key),
        "gating": c in report.decision.gating,
        "candidate": {"passed": c.candidate.passed, "runs": c.candidate.total},
        "basis": {"passed": c.basis.passed, "runs": c.basis.total},
        "p": c.p,
        "q": c.q,
        "reason": c.reason,
        "notes": list(c.notes),
        "triage": {"class": t.cls, "reason": t.reason, "runs": list(t.runs)} if t else None,
    }


def render_json(report: Any) -> str:
    return json.dumps(as_dict(report), indent=2, sort_keys=True) + "\n"


def _headline(report: Any) -> str:
    d = report.decision
    return f"{d.verdict.upper()} (exit {d.exit_code})"


# the statuses that are nouns, in the plural ("missing basis" and "not significant" stay)
MANY = {s: f"{s}s" for s in ORDER[:4]}


def _tally(report: Any) -> str:
    d = report.decision
    parts = [count(n, s, MANY.get(s, s)) for s, n in d.counts.items() if n and s != "accepted"]
    if d.counts.get("accepted"):
        parts.append(f"{d.counts['accepted']} of them accepted")
    return ", ".join(parts) or "no cell"


def render_text(report: Any) -> str:
    d = report.decision
    lines = [
        f"readiness of job {report.job}: {count(len(report.candidate_runs), 'candidate run')} "
        f"{report.start:%Y-%m-%d %H:%M} – {report.end:%Y-%m-%d %H:%M} against {report.basis} "
        f"({count(len(report.basis_runs), 'basis run')})",
        f"Sippy's rules: {_rules(report)}",
        f"environments: {'; '.join(_envs(report)) or 'none'}",
        "",
    ]
    width = max((len(c.shown_status) for c in d.cells), default=0)
    for c in _cells(report):
        head = f"{c.shown_status.upper():>{width}}  {c.check}  {c.env.label}  "
        head += f"candidate {_rate(c.candidate)}  basis {_rate(c.basis)}"
        if c.p is not None:
            head += f"  p={_p(c.p)}" + (f" q={_p(c.q)}" if c.q is not None else "")
        lines.append(head)
        pad = " " * (width + 2)
        t = report.triage.get((c.check, c.env.label))
        if t:
            lines.append(f"{pad}triage: {t.cls}: {t.reason}")
        if accepted := report.accepted.get((c.check, c.env.label)):
            lines.append(f"{pad}{text(accepted)}")
        lines += [f"{pad}{n}" for n in c.notes]
    lines += [""]
    if d.untested:
        lines.append(
            f"{count(d.untested, 'cell')} with no counted run on either side (skipped), not listed"
        )
    lines += [_tally(report), f"{_headline(report)}: " + "; ".join(d.reasons)]
    return encode.terminal("\n".join(lines)) + "\n"


def render_md(report: Any) -> str:
    d = report.decision
    lines = [
        f"# Readiness of job {encode.markdown(report.job)}",
        "",
        f"**{_headline(report)}**",
        "",
        *[f"- {encode.markdown(r)}" for r in d.reasons],
        "",
        f"{count(len(report.candidate_runs), 'candidate run')} from {report.start:%Y-%m-%d %H:%M} to "
        f"{report.end:%Y-%m-%d %H:%M} against {encode.markdown(report.basis)} "
        f"({count(len(report.basis_runs), 'basis run')}). Sippy's rules: {encode.markdown(_rules(report))}.",
        "",
        f"Environments: {encode.markdown('; '.join(_envs(report)) or 'none')}. {encode.markdown(_tally(report))}."
        + (
            f" {count(d.untested, 'cell')} with no counted run on either side "
            f"{'is' if d.untested == 1 else 'are'} not listed."
            if d.untested
            else ""
        ),
        "",
        "| status | check | environment | candidate | basis | p | triage | notes |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for c in _cells(report):
        t = report.triage.get((c.check, c.env.label))
        accepted = report.accepted.get((c.check, c.env.label))
        notes = [text(accepted) if accepted else "", *c.notes]
        lines.append(
            "| "
            + " | ".join(
                encode.markdown(x)
                for x in (
                    c.shown_status,
                    c.check,
                    c.env.label,
                    _rate(c.candidate),
                    _rate(c.basis),
                    _p(c.p) + (f" (q {_p(c.q)})" if c.q is not None else ""),
                    f"{t.cls}: {t.reason}" if t else "",
                    "; ".join(n for n in notes if n),
                )
            )
            + " |"
        )
    return "\n".join(lines) + "\n"


RENDERERS = {"term": render_text, "md": render_md, "json": render_json}
