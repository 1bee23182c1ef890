"""Counted nouns, said as English says them: "1 host", "2 hosts", "0 runs". Pure; every
sink (terminal, Markdown, HTML, JSON messages, notifications) uses it, so no "1 hosts" or
"run(s)" reaches a reader."""

from __future__ import annotations

_IRREGULAR = {"match": "matches", "crash": "crashes", "is": "are", "was": "were", "has": "have"}


def plural(noun: str) -> str:
    """The plural of a noun valorch counts (regular, plus the few it uses that are not)."""
    main, sep, tail = noun.partition(" (")  # "environment (image on a host class)"
    before, space, head = main.rpartition(" ")  # "timed check": the noun is the last word
    many = _IRREGULAR.get(head) or (
        head[:-1] + "ies" if head.endswith("y") and head[-2:-1] not in "aeiou" else head + "s"
    )
    return before + space + many + sep + tail


def count(n: int, noun: str, many: str | None = None) -> str:
    """``n`` and the noun in the number ``n`` takes: "1 host", "3 hosts", "0 hosts"."""
    return f"{n} {noun if n == 1 else (many or plural(noun))}"


def cut(text: str, most: int) -> str:
    """``text`` within ``most`` characters; a cut one ends with "…", so that no reader takes a
    truncated symbol or path for the whole of it."""
    return text if len(text) <= most else text[: max(0, most - 1)] + "…"
