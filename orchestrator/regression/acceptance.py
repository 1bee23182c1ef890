"""An accepted regression: a red readiness cell that ships knowingly, until it expires
(pure). Accepting is not editing: the cell stays red, the acceptance is shown beside it and
only keeps it from gating while it is live and the cell passes at least the rate it names."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from fnmatch import fnmatchcase
from typing import Any


@dataclass(frozen=True)
class Acceptance:
    id: int
    check: str  # a check id or glob
    env: str  # a glob over the image alias or ALIAS@ARCH (host@cpu, rocm_*@amd:gfx942)
    reason: str
    by: str
    until: datetime
    expected_rate: float | None
    created: datetime

    def covers(self, check: str, alias: str, arch: str) -> bool:
        return fnmatchcase(check, self.check) and (
            fnmatchcase(alias, self.env) or fnmatchcase(f"{alias}@{arch}", self.env)
        )

    def holds(self, now: datetime, rate: float | None) -> tuple[bool, str]:
        """Whether it keeps its cell from gating now, and why not."""
        if self.until <= now:
            return False, f"expired on {self.until:%Y-%m-%d %H:%M}: the cell gates again"
        if self.expected_rate is not None and rate is not None and rate < self.expected_rate:
            return False, (
                f"the pass rate {rate:.0%} is below the accepted {self.expected_rate:.0%}: "
                "the cell gates again"
            )
        return True, ""

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "check": self.check,
            "env": self.env,
            "reason": self.reason,
            "by": self.by,
            "until": self.until.isoformat(timespec="minutes"),
            "expected_rate": self.expected_rate,
            "created": self.created.isoformat(timespec="seconds"),
        }


def note(
    cell_check: str,
    alias: str,
    arch: str,
    rate: float | None,
    found: list[Acceptance],
    now: datetime,
) -> dict[str, Any] | None:
    """What a red cell shows of the acceptances that cover it: the live one that holds, else
    the newest that no longer does (with why), else None."""
    mine = [a for a in found if a.covers(cell_check, alias, arch)]
    if not mine:
        return None
    judged = [(a, *a.holds(now, rate)) for a in mine]
    live = [j for j in judged if j[1]]
    a, ok, why = max(live or judged, key=lambda j: j[0].until)
    return {**a.as_dict(), "live": ok, "why": why}
