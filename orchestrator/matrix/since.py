""""Since PyTorch" / "Since ROCm" columns (pure): the earliest version at and after
which a check passes in every later version observed."""

from __future__ import annotations

import re
from typing import Iterable


def version_key(version: str) -> tuple[tuple[int, int | str], ...]:
    """'2.13.0' > '2.4' > '1.13'; a letter part sorts before a number part ('2.4.0rc1' < '2.4.0.1')."""
    text = version.strip().lower()
    text = text[1:] if re.match(r"^v\d", text) else text
    return tuple((1, int(t)) if t.isdigit() else (0, t) for t in re.findall(r"\d+|[a-z]+", text))


def since(points: Iterable[tuple[str, bool]]) -> str | None:
    """points: (component version, passed) per observed image. Several images of one
    version must all pass. None when the newest version does not pass (or no points)."""
    by_version: dict[tuple, tuple[str, bool]] = {}
    for version, passed in points:
        key = version_key(version)
        first, ok = by_version.get(key, (version, True))
        by_version[key] = (first, ok and passed)
    answer = None
    for key in sorted(by_version, reverse=True):
        version, ok = by_version[key]
        if not ok:
            break
        answer = version
    return answer
