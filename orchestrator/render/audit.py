"""Inventory audit findings and diffs → Markdown and JSON (the CycloneDX SBOM is
``ext/sbom/render.py``). Renderers return strings; the CLI writes them.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from ..components import Inventory

if TYPE_CHECKING:
    from ..audit import Finding
    from ..spec import Change


def _cell(text: str | None) -> str:
    return "" if text is None else str(text).replace("|", "\\|").replace("\n", " ")


_MARK = {
    "ok": "ok",
    "drift": "**DRIFT**",
    "missing": "**MISSING**",
    "unpinned": "unpinned",
    "build-mismatch": "build mismatch",
    "broken": "**DOES NOT IMPORT**",
    "differs": "**VERSIONS DIFFER**",
}


def render_findings_md(
    findings: list[Finding], image: str = "", inventory: Inventory | None = None
) -> str:
    drift = sum(f.drift for f in findings)
    lines = [
        "# Inventory audit%s" % (": `%s`" % image if image else ""),
        "",
        "%d component(s) checked, %d drift." % (len(findings), drift),
        "",
        "| component | expected | found | status | evidence |",
        "| --- | --- | --- | --- | --- |",
    ]
    for f in findings:
        lines.append(
            "| %s | %s | %s | %s | %s |"
            % (
                _cell(f.component),
                _cell(f.expected),
                _cell(f.found or "-"),
                _MARK[f.kind],
                "`%s`" % _cell(f.evidence) if f.evidence else "",
            )
        )
    said = {title: [f.message for f in findings if f.kind == kind] for kind, title in _SAID.items()}
    said["Gatherer errors"] = list(inventory.errors) if inventory is not None else []
    for title, items in said.items():
        if items:
            lines += ["", f"## {title}", ""] + ["- " + _cell(m) for m in items]
    return "\n".join(lines) + "\n"


#: the findings listed below the table with their messages, by kind
_SAID = {
    "broken": "Installed but does not import",
    "differs": "Module vs package manager",
    "build-mismatch": "Compiled against vs installed",
}


def render_diff_md(changes: list[Change], a: str = "A", b: str = "B") -> str:
    head = [c for c in changes if ":" not in c.subject]
    pkgs = [c for c in changes if ":" in c.subject]
    lines = ["# Inventory diff: `%s` → `%s`" % (a, b), ""]
    if not changes:
        return "\n".join([*lines, "No differences.", ""])
    lines += [
        "| component | %s | %s | change |" % (_cell(a), _cell(b)),
        "| --- | --- | --- | --- |",
    ]
    lines += [_change_row(c) for c in head]
    if not head:
        lines.append("| (no headline component changed) | | | |")
    if pkgs:
        counts = {k: sum(c.kind == k for c in pkgs) for k in ("added", "removed", "changed")}
        lines += [
            "",
            "## Packages (%d added, %d removed, %d changed)"
            % (counts["added"], counts["removed"], counts["changed"]),
            "",
            "| package | %s | %s | change |" % (_cell(a), _cell(b)),
            "| --- | --- | --- | --- |",
        ]
        lines += [_change_row(c) for c in pkgs]
    return "\n".join(lines) + "\n"


def _change_row(c: Change) -> str:
    return f"| {_cell(c.subject)} | {_cell(c.old or '-')} | {_cell(c.new or '-')} | {c.kind} |"


def render_diff_json(changes: list[Change], a: str = "A", b: str = "B") -> str:
    listed = [{"kind": c.kind, "name": c.subject, "old": c.old, "new": c.new} for c in changes]
    return json.dumps({"a": a, "b": b, "changes": listed}, indent=1, sort_keys=True) + "\n"
