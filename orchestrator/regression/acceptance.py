"""An accepted regression: a red readiness cell that ships knowingly, until a day (pure).
Accepting is not editing: the cell stays red, the acceptance is shown beside it and only
keeps it from gating while it is live (not revoked, its last day not past) and the cell
passes at least the rate it names.

The rules (docs/readiness.md, the section on `valorch accept add`), each decided here once:

- an acceptance **covers** a cell when its check glob matches the cell's check id and its
  environment glob matches the image alias or ``ALIAS@ARCH`` (``host@cpu``,
  ``rocm_*@amd:gfx942``);
- ``--until`` is a **whole day, inclusive, in UTC**: ``--until 2027-01-31`` covers every
  moment of 2027-01-31 UTC and none of 2027-02-01;
- a **revoked** acceptance excuses nothing from the moment it is revoked (it stays in the
  history, shown as revoked);
- with an expected rate, a cell whose candidate pass rate is below it is not excused.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime
from fnmatch import fnmatchcase
from typing import Any

#: what ``--until`` takes, for the messages that refuse anything else
UNTIL_FORM = "a day, YYYY-MM-DD (UTC; the whole day is covered, e.g. --until 2027-01-31)"
_DAY = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def until_day(text: str) -> date:
    """``--until``'s value as the last day covered; ValueError saying why (a time or an
    offset, a day no calendar has)."""
    value = (text or "").strip()
    if not _DAY.match(value):
        if _DAY.match(value[:10]) and len(value) > 10:
            raise ValueError(
                f"{text!r} has a time or an offset: --until takes {UNTIL_FORM}, a whole day"
            )
        raise ValueError(f"{text!r} is not a day: --until takes {UNTIL_FORM}")
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise ValueError(
            f"{text!r} is not a day of the calendar: --until takes {UNTIL_FORM}"
        ) from None


@dataclass(frozen=True)
class Revocation:
    by: str
    reason: str
    at: datetime  # UTC


@dataclass(frozen=True)
class Acceptance:
    id: int
    check: str  # a check id or glob
    env: str  # a glob over the image alias or ALIAS@ARCH (host@cpu, rocm_*@amd:gfx942)
    reason: str
    by: str
    until: date  # the last day covered, UTC, inclusive
    expected_rate: float | None
    created: datetime
    revoked: Revocation | None = None

    def covers(self, check: str, alias: str, arch: str) -> bool:
        return fnmatchcase(check, self.check) and (
            fnmatchcase(alias, self.env) or fnmatchcase(f"{alias}@{arch}", self.env)
        )

    def live(self, now: datetime) -> bool:
        """Not revoked and its last day not past (``now`` in UTC)."""
        return self.revoked is None and now.date() <= self.until

    def holds(self, now: datetime, rate: float | None) -> tuple[bool, str]:
        """Whether it keeps a cell it covers from gating now, and why not."""
        if self.revoked is not None:
            r = self.revoked
            return False, (
                f"revoked by {r.by} on {r.at:%Y-%m-%d %H:%M} UTC ({r.reason}): the cell gates again"
            )
        if now.date() > self.until:
            return False, f"expired after {self.until:%Y-%m-%d} (UTC): the cell gates again"
        if self.expected_rate is not None and rate is not None and rate < self.expected_rate:
            return False, (
                f"the pass rate {rate:.0%} is below the accepted {self.expected_rate:.0%}: "
                "the cell gates again"
            )
        return True, ""

    def as_dict(self, now: datetime | None = None) -> dict[str, Any]:
        got: dict[str, Any] = {
            "id": self.id,
            "check": self.check,
            "env": self.env,
            "reason": self.reason,
            "by": self.by,
            "until": self.until.isoformat(),
            "expected_rate": self.expected_rate,
            "created": self.created.isoformat(timespec="seconds"),
            "revoked": None
            if self.revoked is None
            else {
                "by": self.revoked.by,
                "reason": self.revoked.reason,
                "at": self.revoked.at.isoformat(timespec="seconds"),
            },
        }
        if now is not None:
            got["state"] = state(self, now)
            got["live"] = self.live(now)
        return got


def state(a: Acceptance, now: datetime) -> str:
    """``live``, ``expired`` or ``revoked``: what ``accept list`` shows."""
    if a.revoked is not None:
        return "revoked"
    return "live" if a.live(now) else "expired"


@dataclass(frozen=True)
class Waiver:
    """The one decision about a red cell and the acceptances: which acceptance is shown
    beside it (None: none covers it), whether it excuses the cell, and why not."""

    acceptance: Acceptance | None
    excuses: bool
    why: str

    def as_dict(self, now: datetime) -> dict[str, Any] | None:
        if self.acceptance is None:
            return None
        return {**self.acceptance.as_dict(), "live": self.excuses, "why": self.why}


def decide(
    cell_check: str,
    alias: str,
    arch: str,
    rate: float | None,
    found: list[Acceptance],
    now: datetime,
) -> Waiver:
    """Whether any acceptance excuses this red cell: the one that holds with the latest last
    day, else the covering one with the latest last day (with why it does not)."""
    mine = [a for a in found if a.covers(cell_check, alias, arch)]
    if not mine:
        return Waiver(None, False, "no acceptance covers it")
    judged = [(a, *a.holds(now, rate)) for a in mine]
    live = [j for j in judged if j[1]]
    a, ok, why = max(live or judged, key=lambda j: (j[0].until, j[0].id))
    return Waiver(a, ok, why)


def note(
    cell_check: str,
    alias: str,
    arch: str,
    rate: float | None,
    found: list[Acceptance],
    now: datetime,
) -> dict[str, Any] | None:
    """What a red cell shows of the acceptances that cover it (``decide``'s decision as a
    dict, ``live``: it excuses the cell), else None."""
    return decide(cell_check, alias, arch, rate, found, now).as_dict(now)


#: checks a job declares (command.<id>, pytest.<test>) or a backend adds: no manifest names
#: them, so only a stored run can; ``--allow-unseen`` accepts one ahead of its first run
DECLARED = ("command.", "pytest.", "inventory.", "tf.", "env.")
_GLOB = frozenset("*?[")


@dataclass(frozen=True)
class Problem:
    """Why an acceptance's CHECK or --env is refused (exit 2): what, and what to do."""

    what: str
    hint: str


def _nearest(text: str, names: list[str]) -> list[str]:
    from difflib import get_close_matches

    bare = "".join(ch for ch in text if ch not in _GLOB) or text
    return get_close_matches(bare, names, n=3, cutoff=0.5)


def check_problem(pattern: str, known: list[str], allow_unseen: bool = False) -> Problem | None:
    """Whether CHECK names a check: a check id or a glob over ``known`` (the probe's manifest
    and the check ids the store holds). A check a job declares (``command.*``, ``pytest.*``)
    that no run has stored yet passes with ``allow_unseen``; a built-in check never does."""
    from .known_issues import glob_problem

    bad = glob_problem(pattern)
    if bad:
        return Problem(
            f"CHECK {pattern!r} {bad}: the glob would match nothing",
            "globs use *, ? and [abc]; write [[] for a literal [",
        )
    glob = any(ch in _GLOB for ch in pattern)
    if (glob and any(fnmatchcase(k, pattern) for k in known)) or (not glob and pattern in known):
        return None
    if allow_unseen and pattern.startswith(DECLARED):
        return None
    near = _nearest(pattern, known)
    return Problem(
        f"CHECK {pattern!r} "
        + ("matches no check" if glob else "is no check")
        + " of the probe's manifest or of the runs the store holds",
        (f"did you mean {', '.join(near)}? " if near else "")
        + "valorch suites show SUITE lists the built-in checks; a check a job declares "
        "(command.*, pytest.*) that has not run yet needs --allow-unseen",
    )


def env_problem(pattern: str, stored: list[str], allow_unseen: bool = False) -> Problem | None:
    """Whether --env is an ALIAS or ALIAS@ARCH glob (``rocm_*@amd:gfx942``) that matches an
    environment the store holds a run of (``stored``: ``alias@arch`` strings); with
    ``allow_unseen`` only its syntax is checked."""
    from .known_issues import glob_problem

    form = "an image alias or ALIAS@ARCH glob, e.g. host@cpu or 'rocm_*@amd:gfx942'"
    alias, at, arch = pattern.partition("@")
    if not alias or (at and not arch) or "@" in arch:
        return Problem(f"--env {pattern!r} is not {form}", "write ALIAS or ALIAS@ARCH, one @")
    for part in (alias, arch):
        bad = glob_problem(part) if part else None
        if bad:
            return Problem(
                f"--env {pattern!r} {bad}: the glob would match nothing",
                "globs use *, ? and [abc]; write [[] for a literal [",
            )
    if allow_unseen:
        return None
    if any(
        fnmatchcase(env.partition("@")[0], pattern) or fnmatchcase(env, pattern) for env in stored
    ):
        return None
    near = _nearest(pattern, stored)
    return Problem(
        f"--env {pattern!r} matches no environment the store holds a run of",
        (
            f"the nearest: {', '.join(near)}; "
            if near
            else (f"there are: {', '.join(sorted(stored)[:5])}; " if stored else "")
        )
        + f"--env takes {form}; --allow-unseen accepts it ahead of its first run",
    )
