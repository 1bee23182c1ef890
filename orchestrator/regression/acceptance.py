"""What ``valorch accept add`` checks before it records a waiver in the store (pure): its last
day (``--until``: a whole day, inclusive, in UTC), its CHECK and its --env, each against the
checks and environments valorch knows. What a stored waiver then excuses is decided with
every other waiver's, in regression/waivers.py.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date
from fnmatch import fnmatchcase

from .known_issues import DECLARED, glob_problem

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
    if allow_unseen or any(
        fnmatchcase(e.partition("@")[0], pattern) or fnmatchcase(e, pattern) for e in stored
    ):
        return None
    near = _nearest(pattern, stored)
    listed = f"there are: {', '.join(sorted(stored)[:5])}; " if stored else ""
    return Problem(
        f"--env {pattern!r} matches no environment the store holds a run of",
        (f"the nearest: {', '.join(near)}; " if near else listed)
        + f"--env takes {form}; --allow-unseen accepts it ahead of its first run",
    )
