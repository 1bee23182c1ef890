"""The one rule for a line of text valorch shows (a name, a label, a feature): printable,
on one line. What an import accepts and what valorch itself stores follow it, so that
every export reads back. Pure; imports nothing."""

from __future__ import annotations

import re
from typing import Any

#: C0 and C1 controls, DEL, the bidirectional overrides and isolates (an RTL override
#: reorders what a terminal or a page shows), line and paragraph separators, surrogates
CONTROL = re.compile(
    "[\x00-\x1f\x7f-\x9f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
)


def problem(value: str, lines: bool = False) -> str | None:
    """What makes ``value`` not one line of printable text (``lines``: newlines and tabs
    allowed, as in a job's description); None when it is. The one rule of names and text,
    on input (a job spec) and on import alike, so that every export reads back."""
    for m in CONTROL.finditer(value):
        if lines and m.group(0) in "\n\t":
            continue
        rule = (
            "text is printable (newlines and tabs allowed)"
            if lines
            else "names and features are printable text on one line"
        )
        return f"holds the control character U+{ord(m.group(0)):04X} at offset {m.start()}; {rule}"
    return None


def checked(value: Any) -> Any:
    """``value`` when it is not a string or is printable text on one line, else ValueError
    (a pydantic AfterValidator)."""
    if isinstance(value, str):
        found = problem(value)
        if found:
            raise ValueError(found)
    return value


def visible(value: str | None, limit: int = 300) -> str | None:
    """``value`` with each character the rule refuses written as its escape (``\\x1b``,
    ``\\u202e``), within ``limit`` characters: what a workload reports is kept, as text
    valorch can read back."""
    if value is None or CONTROL.search(value) is None:
        return value
    return CONTROL.sub(
        lambda m: m.group(0).encode("unicode_escape", "backslashreplace").decode(), value
    )[:limit]
