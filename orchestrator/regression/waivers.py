"""Waivers: the one way a failure is excused, decided here once (pure).

A waiver says that a check may fail, where (an image glob, a host-class glob, a backend, GPU
archs), in which statuses, why, until which day, and optionally at which pass rate. It has
two sources and one shape: an entry of a known-issues file (``known_issues.load``: YAML,
kept by hand beside the jobs) and a row of the store (``valorch accept add``: who accepted
it, revocable). run, diff, qualify, readiness, the matrix and the site all ask ``decide``;
none of them reads a source's own fields, so the two sources cannot excuse differently.

The rules are docs/readiness.md's, "Waivers"; ``closing`` says when a waiver's checks have
passed long enough to drop it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from fnmatch import fnmatchcase

from ..statuses import FAILING

#: what a store waiver (``accept add``) covers: a check that ran and failed
FAILED = (*FAILING, "missing")


@dataclass(frozen=True)
class Revocation:
    by: str
    reason: str
    at: datetime  # UTC


@dataclass(frozen=True)
class Waiver:
    check: str  # a check id or glob
    reason: str
    images: str = "*"  # a glob over the image alias
    host: str = "*"  # a glob over the host class (cpu, amd:gfx942)
    backend: str | None = None
    arch: tuple[str, ...] = ()  # GPU archs or families (gfx942, sm_90, gfx94x, cpu); () any
    status: tuple[str, ...] = ("fail",)  # the statuses it excuses (``missing``: not run)
    url: str = ""
    until: date | None = None  # the last day it holds, UTC, inclusive; None: no end
    expected_rate: float | None = None
    by: str = ""
    source: str = ""  # where it comes from: FILE:LINE, or "accept #ID" (the store)
    id: int = 0  # the store's id (0: from a file)
    created: datetime | None = None
    revoked: Revocation | None = None

    @property
    def env(self) -> str:
        """The scope as ``accept add --env`` writes it: ALIAS or ALIAS@ARCH."""
        return self.images if self.host == "*" else f"{self.images}@{self.host}"

    @property
    def scoped(self) -> bool:
        """Scoped to part of the fleet: an image or host glob, a backend or an arch."""
        return self.env != "*" or self.backend is not None or bool(self.arch)

    def on_arch(self, host_class: str) -> bool:
        """Whether a host class (``amd:gfx942``, ``nvidia:sm_90+...``, ``cpu``) is in scope."""
        if not self.arch:
            return True
        have = {part.split(":", 1)[-1].lower() for part in host_class.split("+") if part}
        return any(
            h.startswith(a[:-1].lower()) if a.lower().endswith("x") else h == a.lower()
            for a in self.arch
            for h in have
        )

    def in_scope(self, alias: str, host: str, backend: str | None) -> bool:
        """An environment of its scope (``host``: the host class, "" unknown; ``backend``
        None: unknown, any)."""
        return (
            fnmatchcase(alias.split(" → ")[-1], self.images)
            and (self.host == "*" or fnmatchcase(host, self.host))
            and (self.backend is None or backend is None or self.backend == backend)
            and self.on_arch(host)
        )

    def covers(
        self, check: str, alias: str, host: str, backend: str | None, status: str | None
    ) -> bool:
        """In scope, its check and one of its statuses (``status`` None: any)."""
        return (
            fnmatchcase(check, self.check)
            and self.in_scope(alias, host, backend)
            and (status is None or status in self.status)
        )

    def expired(self, today: date) -> bool:
        return self.until is not None and self.until < today

    def holds(self, now: datetime, rate: float | None = None) -> tuple[bool, str]:
        """Whether it excuses what it covers now, and why not."""
        if self.revoked is not None:
            r = self.revoked
            return False, f"revoked by {r.by} on {r.at:%Y-%m-%d %H:%M} UTC ({r.reason})"
        if self.expired(now.date()):
            return False, f"expired after {self.until:%Y-%m-%d} (UTC)"
        if self.expected_rate is not None and rate is not None and rate < self.expected_rate:
            return False, f"the pass rate {rate:.0%} is below the accepted {self.expected_rate:.0%}"
        return True, ""

    def state(self, now: datetime) -> str:
        if self.revoked is not None:
            return "revoked"
        return "expired" if self.expired(now.date()) else "live"


@dataclass(frozen=True)
class Decision:
    """Which waiver is shown beside a failure (None: none covers it), whether it excuses the
    failure, and why not."""

    waiver: Waiver | None
    excuses: bool
    why: str


def decide(
    waivers: Iterable[Waiver],
    check: str,
    alias: str,
    host: str,
    now: datetime,
    *,
    backend: str | None = None,
    status: str | None = None,
    rate: float | None = None,
) -> Decision:
    """Whether any waiver excuses this failure (docs/readiness.md, "Waivers")."""
    mine = [w for w in waivers if w.covers(check, alias, host, backend, status)]
    if not mine:
        return Decision(None, False, "no waiver covers it")
    judged = [(w, *w.holds(now, rate)) for w in mine]
    live = [j for j in judged if j[1]]
    return Decision(*max(live or judged, key=lambda j: j[0].until or date.max))


@dataclass(frozen=True)
class Waivers:
    """The waivers of one command, from both sources; ``match`` is the diff's Matcher.
    ``warnings``: entries that can never match, each naming its file and line; ``unscoped``:
    entries with no scope at all (``known-issues status`` warns about them)."""

    entries: tuple[Waiver, ...]
    now: datetime
    warnings: tuple[str, ...] = ()
    unscoped: tuple[str, ...] = ()

    @property
    def today(self) -> date:
        return self.now.date()

    def __add__(self, more: Sequence[Waiver]) -> Waivers:
        return Waivers((*self.entries, *more), self.now, self.warnings, self.unscoped)

    def match(
        self, env: str, backend: str, check: str, status: str, host: str
    ) -> tuple[Waiver, bool] | None:
        """The waiver shown for this failure and whether it no longer holds (None: none)."""
        got = decide(self.entries, check, env, host, self.now, backend=backend, status=status)
        return None if got.waiver is None else (got.waiver, not got.excuses)

    def excuse(self, env: str, backend: str, check: str, status: str, host: str) -> Waiver | None:
        got = self.match(env, backend, check, status, host)
        return got[0] if got is not None and not got[1] else None

    def expired(self) -> tuple[Waiver, ...]:
        return tuple(w for w in self.entries if w.expired(self.today))


@dataclass(frozen=True)
class ScopedRun:
    """One stored run of a waiver's checks in an environment of its scope: the verdict of
    each of its checks there (matrix/model.verdict of the attempts)."""

    env: str  # ALIAS@ARCH (host class): the unit a waiver closes in
    run: str
    started: datetime
    verdicts: tuple[str, ...]

    @property
    def passed(self) -> bool:
        return all(v == "pass" for v in self.verdicts)

    def failed(self, waiver: Waiver) -> bool:
        """A check of the waiver ended in a status it expects, failed or was flaky."""
        return any(v in waiver.status or v in (*FAILING, "flaky") for v in self.verdicts)


@dataclass(frozen=True)
class Closing:
    """Whether a waiver can close, decided once (``closing``): the environments it must pass
    in and how each did over the span, the ones that keep it open, and why."""

    can_close: bool
    why: str
    recent: dict[str, tuple[int, int]]  # environment -> (runs passing, runs) in the span
    failed: tuple[str, ...]  # environments where its checks failed (in any stored run)
    short: tuple[str, ...]  # environments that keep it open


def closing(
    waiver: Waiver, history: Sequence[ScopedRun], runs: int, since: datetime, days: float
) -> Closing:
    """The closing rule (docs/readiness.md, "When a known issue can close"): it can close when
    every environment of its scope that either ran its checks in the span (since ``since``,
    the last ``days`` days) or where they ever failed has at least ``runs`` runs in the span,
    every one of them passing; and at least one environment has. An environment that failed
    and has not run since keeps it open."""
    recent: dict[str, list[bool]] = {}
    for r in history:
        if r.started >= since:
            recent.setdefault(r.env, []).append(r.passed)
    failed = tuple(sorted({r.env for r in history if r.failed(waiver)}))
    counts = {e: (sum(v), len(v)) for e, v in recent.items()}
    need = {**dict.fromkeys(failed, (0, 0)), **counts}
    short = tuple(sorted(e for e, (p, n) in need.items() if p < n or n < runs))
    if not need:
        why = f"no run of its checks in its scope in the last {days:g} days"
    elif short:
        why = "; ".join(
            f"{e}: failed and has not run in the last {days:g} days (needs {runs} passing runs)"
            if need[e][1] == 0
            else f"{e}: {need[e][0]}/{need[e][1]} passed"
            + (f" (needs {runs})" if need[e][1] < runs else "")
            for e in short
        )
    else:
        why = (
            f"its checks passed in every run of every matching environment over the last "
            f"{days:g} days ("
            + ", ".join(f"{e}: {n} runs" for e, (_p, n) in sorted(counts.items()))
            + ")"
        )
    return Closing(bool(need) and not short, why, counts, failed, short)
