""" "Since PyTorch" / "Since ROCm" columns (pure): the oldest version whose newest verdict
is pass (or partial, shown ⚠️) and from which every newer version tested passes — said
no more precisely than it was measured ("≤ X" where nothing older was tested)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

GOOD = ("pass", "partial")


def version_key(version: str) -> tuple[tuple[int, int | str], ...]:
    """'2.13.0' > '2.4' > '1.13'; a letter part sorts before a number part ('2.4.0rc1' < '2.4.0.1')."""
    text = version.strip().lower()
    text = text[1:] if re.match(r"^v\d", text) else text
    return tuple((1, int(t)) if t.isdigit() else (0, t) for t in re.findall(r"\d+|[a-z]+", text))


def _worst(verdicts: list[str]) -> str:
    """Several images of one version: pass only if all pass, partial if the rest pass."""
    if all(v == "pass" for v in verdicts):
        return "pass"
    if all(v in GOOD for v in verdicts):
        return "partial"
    return next(v for v in verdicts if v not in GOOD)


@dataclass(frozen=True)
class Since:
    """The answer for one row: ``text`` as the table shows it, ``note`` how it was measured."""

    version: str | None  # the oldest version of the newest passing streak; None: not passing
    partial: bool  # some version of the streak is only partial
    bounded: bool  # an older version was tested and does not pass (so `version` is the start)
    before: str | None  # the newest tested version older than `version` (it does not pass)
    newest: str | None

    @property
    def text(self) -> str:
        if self.newest is None:
            return "not tested"
        if self.version is None:
            return "—"
        mark = "⚠️ " if self.partial else ""
        return f"{mark}{self.version}" if self.bounded else f"{mark}≤ {self.version}"

    @property
    def note(self) -> str:
        if self.newest is None:
            return "not tested"
        if self.version is None:
            return f"does not pass in {self.newest}, the newest version tested"
        partial = "; partial support in part of the range" if self.partial else ""
        if self.bounded:
            return f"passes from {self.version} on; {self.before} was tested and does not pass{partial}"
        return f"passes in every version tested; not tested before {self.version}{partial}"


def since_of(points: Iterable[tuple[str, str]]) -> Since:
    """points: (component version, verdict) per observed image. The versions are walked
    newest first while they pass (or are partial); the answer is the last one reached."""
    by_version: dict[tuple[tuple[int, int | str], ...], tuple[str, list[str]]] = {}
    for version, verdict in points:
        by_version.setdefault(version_key(version), (version, []))[1].append(verdict)
    order = sorted(by_version, reverse=True)
    if not order:
        return Since(None, False, False, None, None)
    newest = by_version[order[0]][0]
    answer, partial, before = None, False, None
    for key in order:
        version, verdicts = by_version[key]
        verdict = _worst(verdicts)
        if verdict not in GOOD:
            before = version
            break
        answer, partial = version, partial or verdict == "partial"
    return Since(answer, partial, before is not None and answer is not None, before, newest)
