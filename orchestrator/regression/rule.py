"""Two result sets → a regression Report (pure: no I/O, no SQL).

The rule is DESIGN.md "Regression rule":

- status: pass→fail/crash/timeout REGRESSED, fail→pass FIXED, pass→unsupported/skip
  and a removed check COVERAGE LOST, a new check COVERAGE GAINED, anything with
  ``error`` INCONCLUSIVE, mixed attempts in head FLAKY, a failing head matched by a
  live known issue EXPECTED, a changed check version ``x`` (not comparable);
- timing (samples in seconds, smaller is better unless ``bigger_is_better``): worse
  only if the median ratio passes the threshold AND the difference is significant
  (Mann–Whitney U p < 0.01 with >= 10 samples a side, else non-overlapping 99 %
  bootstrap intervals of the medians). Over the threshold but not significant is
  ``~``: shown, not counted.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field
from datetime import date
from typing import Callable, Iterable, Sequence

from . import stats
from ..matrix.model import FAILING, SYMBOL, verdict
# Change kinds, most serious first (the order of the report's sections), are spec.py's vocabulary.
from ..spec import (CHANGED, COUNTED, COVERAGE_GAINED, COVERAGE_LOST, EXPECTED, FASTER, FIXED, FLAKY,  # noqa: F401
                    MARK, NOISE, NOT_COMPARABLE, REGRESSED, SAME, SLOWER)
from ..spec import INCONCLUSIVE_CHANGE as INCONCLUSIVE

from ..spec import DEFAULT_THRESHOLD  # noqa: E402 (re-exported)
ALPHA = 0.01
MWU_MIN = 10  # samples per side for the U test; below: bootstrap intervals
TIMED_MIN = 3  # fewer samples than this on a side: status only

_NOT_RUN = ("unsupported", "skip")


@dataclass(frozen=True)
class Obs:
    """One attempt of one check in one environment (image alias or matrix column)."""

    env: str
    check: str
    status: str
    attempt: int = 1
    version: int | None = 1  # None: unknown (a published matrix stores no versions)
    samples: tuple[float, ...] = ()
    bigger_is_better: bool = False
    threshold: float | None = None
    backend: str = ""
    message: str = ""


@dataclass(frozen=True)
class Side:
    label: str
    kind: str  # run | batch | matrix | baseline | latest | qualify
    observations: tuple[Obs, ...]
    runs: tuple[str, ...] = ()
    digests: tuple[tuple[str, str], ...] = ()  # (env, digest)
    hosts: tuple[str, ...] = ()

    @property
    def envs(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(o.env for o in self.observations))


@dataclass(frozen=True)
class Issue:
    """What the diff needs of a known issue (see known_issues.py)."""

    check: str
    reason: str
    url: str = ""
    expires: date | None = None


@dataclass(frozen=True)
class Timing:
    base_median: float
    head_median: float
    ratio: float  # > 1: worse (slower, or less throughput when bigger is better)
    method: str  # mwu | bootstrap
    p: float | None
    significant: bool
    threshold: float
    n_base: int
    n_head: int


@dataclass(frozen=True)
class Change:
    env: str
    check: str
    kind: str
    base: str  # base verdict ("" when absent)
    head: str
    backend: str = ""
    timing: Timing | None = None
    note: str = ""
    issue: Issue | None = None

    @property
    def mark(self) -> str:
        return MARK[self.kind]


@dataclass(frozen=True)
class Flip:
    env: str
    check: str
    base: str
    head: str


@dataclass(frozen=True)
class Report:
    base: Side
    head: Side
    threshold: float
    changes: tuple[Change, ...]
    flips: tuple[Flip, ...] = ()
    geomean: tuple[tuple[str, str, float, int], ...] = ()  # (env, backend, ratio, n checks)
    expired: tuple[Issue, ...] = ()
    today: date | None = None
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def regressed(self) -> bool:
        return any(c.kind in COUNTED for c in self.changes)

    def of(self, *kinds: str) -> tuple[Change, ...]:
        return tuple(c for c in self.changes if c.kind in kinds)


Matcher = Callable[[str, str, str, str], "tuple[Issue, bool] | None"]  # env, backend, check, status


def _group(side: Side, pair: dict[str, str]) -> dict[tuple[str, str], list[Obs]]:
    out: dict[tuple[str, str], list[Obs]] = {}
    for o in side.observations:
        out.setdefault((pair.get(o.env, o.env), o.check), []).append(o)
    for obs in out.values():
        obs.sort(key=lambda o: o.attempt)
    return out


def _seed(*parts: str) -> int:
    return zlib.crc32("\0".join(parts).encode())


def compare_timing(base: Sequence[float], head: Sequence[float], bigger_is_better: bool, threshold: float,
                   seed: int = 0) -> Timing | None:
    """The timing verdict for one check, or None when a side has too few samples."""
    if len(base) < TIMED_MIN or len(head) < TIMED_MIN:
        return None
    mb, mh = stats.median(base), stats.median(head)
    if mb <= 0 or mh <= 0:
        return None
    ratio = mb / mh if bigger_is_better else mh / mb
    if len(base) >= MWU_MIN and len(head) >= MWU_MIN:
        p = stats.mann_whitney_u(base, head).p
        return Timing(mb, mh, ratio, "mwu", p, p < ALPHA, threshold, len(base), len(head))
    if 1 / (1 + threshold) <= ratio <= 1 + threshold:  # within the threshold: no need to ask
        return Timing(mb, mh, ratio, "bootstrap", None, False, threshold, len(base), len(head))
    lo_b, hi_b = stats.bootstrap_median_ci(base, 1 - ALPHA, seed=seed)
    lo_h, hi_h = stats.bootstrap_median_ci(head, 1 - ALPHA, seed=seed + 1)
    return Timing(mb, mh, ratio, "bootstrap", None, hi_b < lo_h or hi_h < lo_b, threshold, len(base), len(head))


def _timing_kind(t: Timing) -> str:
    if t.ratio > 1 + t.threshold:
        return SLOWER if t.significant else NOISE
    if t.ratio < 1 / (1 + t.threshold):
        return FASTER if t.significant else NOISE
    return SAME


def _status_kind(b: str, h: str) -> str:
    if b == h:
        return SAME
    if b == "pass" and h in FAILING:
        return REGRESSED
    if b in (*FAILING, "xfail", "flaky") and h == "pass":
        return FIXED
    if b == "pass" and h in _NOT_RUN:
        return COVERAGE_LOST
    if b in _NOT_RUN and h == "pass":
        return COVERAGE_GAINED
    return CHANGED


def _one(key: tuple[str, str], bo: list[Obs] | None, ho: list[Obs] | None, threshold: float,
         match: Matcher | None) -> Change:
    env, check = key
    any_o = (ho or bo)[-1]
    backend = any_o.backend
    if not bo:
        return Change(env, check, COVERAGE_GAINED, "", verdict(o.status for o in ho), backend, note="new check")
    bv = verdict(o.status for o in bo)
    if not ho:
        return Change(env, check, COVERAGE_LOST, bv, "", backend, note="check not run in head")
    hv = verdict(o.status for o in ho)
    vb, vh = bo[-1].version, ho[-1].version
    if vb is not None and vh is not None and vb != vh:
        return Change(env, check, NOT_COMPARABLE, bv, hv, backend, note=f"check version {vb} → {vh}")
    if any(o.status == "error" for o in (*bo, *ho)):
        return Change(env, check, INCONCLUSIVE, bv, hv, backend, note=ho[-1].message[:200])
    if hv == "flaky":
        return Change(env, check, FLAKY, bv, hv, backend, note=" → ".join(o.status for o in ho))
    note = ho[-1].message[:200] if hv != "pass" else ""
    if hv in (*FAILING, "unsupported") and match is not None:
        hit = match(env, backend, check, hv)
        if hit is not None:
            issue, expired = hit
            if not expired:
                return Change(env, check, EXPECTED, bv, hv, backend, note=issue.reason, issue=issue)
            note = f"known issue expired on {issue.expires}: {issue.reason}"
    kind = _status_kind(bv, hv)
    if kind == SAME and bv == "pass":
        bs = [s for o in bo if o.status == "pass" for s in o.samples]
        hs = [s for o in ho if o.status == "pass" for s in o.samples]
        thr = ho[-1].threshold if ho[-1].threshold is not None else threshold
        t = compare_timing(bs, hs, ho[-1].bigger_is_better, thr, seed=_seed(env, check))
        if t is not None:
            return Change(env, check, _timing_kind(t), bv, hv, backend, timing=t)
    return Change(env, check, kind, bv, hv, backend, note=note if kind != SAME else "")


def compare(base: Side, head: Side, threshold: float = DEFAULT_THRESHOLD, match: Matcher | None = None,
            expired: Iterable[Issue] = (), today: date | None = None) -> Report:
    """Every (environment, check) of either side → one Change; then flips, geomeans, counts."""
    pair: dict[str, str] = {}
    be, he = base.envs, head.envs
    if len(be) == 1 and len(he) == 1 and be != he:
        pair = {be[0]: f"{be[0]} → {he[0]}", he[0]: f"{be[0]} → {he[0]}"}  # one image against another
    bg, hg = _group(base, pair), _group(head, pair)
    keys = list(dict.fromkeys([*bg, *hg]))
    changes = tuple(_one(k, bg.get(k), hg.get(k), threshold, match) for k in keys)
    flips = tuple(Flip(c.env, c.check, c.base, c.head) for c in changes
                  if c.base and c.head and SYMBOL.get(c.base) != SYMBOL.get(c.head))
    ratios: dict[tuple[str, str], list[float]] = {}
    for c in changes:
        if c.timing is not None:
            ratios.setdefault((c.env, c.backend), []).append(c.timing.ratio)
    geo = tuple((env, be_, stats.geomean(r), len(r)) for (env, be_), r in ratios.items())
    counts: dict[str, int] = {}
    for c in changes:
        counts[c.kind] = counts.get(c.kind, 0) + 1
    return Report(base, head, threshold, changes, flips, geo, tuple(expired), today, counts)
