"""How a command ends: its exit code, why, and the lines it says. The services decide it
(``RunReport.outcome``, ``Qualification.outcome``); the commands print it and exit with it.

Exit codes (docs/design.md, "CLI conventions"): 0 passed, 1 failed or regressed (the gate), 3 inconclusive
(infrastructure errors, a notification that did not arrive, tampered output without the gate).
The other commands that end on an answer decide it here too: ``verify`` (1: no attestation
satisfies the requirement), ``images check`` (1: a tag moved or vanished), ``hosts check`` and
``images pull`` (3: a host, engine or the results database has a problem).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

#: what decided the exit code
Kind = Literal[
    "passed",
    "failed",
    "regressed",
    "tampered",
    "infrastructure",
    "notification lost",
    "not verified",
    "drifted",
    "nothing tested",
]
#: how a line is shown: pass (bold green), fail (bold red), error (red), warn (yellow), plain
Tone = Literal["pass", "fail", "error", "warn", "plain"]

PASSED = 0
GATE_FAILED = 1
INCONCLUSIVE = 3


@dataclass(frozen=True)
class Said:
    """A line a command prints at its end, with its tone."""

    tone: Tone
    text: str


@dataclass(frozen=True)
class Outcome:
    """The end of a command: ``code`` (0, 1 or 3), ``kind`` (what decided it), ``reason`` (one
    line, why) and ``said`` (the lines to print, in order; empty where the output above says it)."""

    code: int
    kind: Kind
    reason: str
    said: tuple[Said, ...] = ()

    @property
    def ok(self) -> bool:
        return self.code == PASSED


def passed(reason: str, said: tuple[Said, ...] = ()) -> Outcome:
    return Outcome(PASSED, "passed", reason, said)
