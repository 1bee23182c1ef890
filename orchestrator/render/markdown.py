"""GitHub-flavoured Markdown."""

from __future__ import annotations

from ..matrix import LEGEND, Matrix


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def matrix_md(matrix: Matrix, title: str = "Compatibility matrix") -> str:
    head = ["Check", "Feature", "Library", *matrix.columns]
    lines = [f"## {title}", "", "| " + " | ".join(_cell(h) for h in head) + " |",
             "|" + "|".join("---" for _ in head) + "|"]
    for row in matrix.rows:
        cells = [f"`{row.key}`", row.feature, row.library or ""]
        cells += [matrix.cell(row.key, col).text for col in matrix.columns]
        lines.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    lines += ["", f"Legend: {LEGEND}", ""]
    return "\n".join(lines)
