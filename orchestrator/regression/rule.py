"""Two result sets → a regression Report (pure: no I/O, no SQL).

The rule is docs/design.md, "Regression rule":

- status: pass→fail/crash/timeout REGRESSED, fail→pass FIXED, pass→unsupported/partial/skip
  and a removed check COVERAGE LOST (a known issue with ``status: missing`` covers a removed one), a new check COVERAGE GAINED (NEW FAILURE when it fails), anything with
  ``error`` INCONCLUSIVE, mixed attempts in head FLAKY, a failing head matched by a
  live known issue EXPECTED, a changed check version ``x`` (not comparable);
- timing (samples in seconds, smaller is better unless ``bigger_is_better``): worse
  only if the median ratio passes the threshold AND the difference is significant
  (Mann–Whitney U p < 0.01 with >= 10 samples a side, else non-overlapping 99 %
  bootstrap intervals of the medians). Over the threshold but not significant is
  ``~``: shown, not counted. Over the many timed checks of one report the p-values
  are Benjamini–Hochberg adjusted (q < 0.05 is significant), and a timing taken on a
  noisy host (regression/noise.py) is ``~`` with the note "noisy host": shown, not counted.
  A significant change counts when its 99 % interval reaches the threshold (so a change of
  the threshold's size is found nine times in ten, not half the time); where the check's
  run-to-run noise is known from A/A runs (same digest, same host), it widens the interval
  and significance must also clear it (calibration: docs/site.md, bench/bench_calibration.py).
"""

from __future__ import annotations

import functools
import math
import zlib
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import date

from .. import words
from ..matrix.model import verdict

# Change kinds, most serious first (the order of the report's sections), are spec.py's vocabulary.
from ..spec import (
    CHANGED,
    COUNTED,
    COVERAGE_GAINED,
    COVERAGE_LOST,
    DEFAULT_THRESHOLD,
    EXPECTED,
    FASTER,
    FIXED,
    FLAKY,
    MARK,
    NEW_FAILURE,
    NOISE,
    NOT_COMPARABLE,
    REGRESSED,
    SAME,
    SLOWER,
)
from ..spec import INCONCLUSIVE_CHANGE as INCONCLUSIVE
from ..statuses import FAILING, SYMBOL
from . import noise, stats
from .waivers import Waiver

ALPHA = 0.01
FDR = 0.05  # Benjamini–Hochberg level over a report's timed checks (the usual 5 %)
MWU_MIN = 10  # samples per side for the U test; below: bootstrap intervals
TIMED_MIN = 3  # fewer samples than this on a side: status only

_NOT_RUN = ("unsupported", "skip", "n/a")  # never exercised: nothing to lose
_LOST = ("unsupported", "partial", "skip", "n/a")  # pass → one of these: coverage lost
NOTE_MAX = 200  # characters of a head's message kept as a cell's note
cut = functools.partial(words.cut, most=NOTE_MAX)


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
    noisy: bool = False  # the host was busy while this timing was taken (regression/noise.py)
    run: str = ""  # the run it comes from: a side may pool several runs of one image
    tampered: bool = False  # an ``error`` whose results were tampered with or cut at the output cap
    definition: str | None = None  # spec.definition_hash (None: unknown, e.g. a published matrix)
    host: str = ""  # the host class (cpu, amd:gfx942; "" unknown): what an arch-scoped waiver needs


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

    @property
    def named(self) -> str:
        """``kind label`` ("baseline v0.2", "run 1a2b3c4d"), the kind said once: a label that
        already starts with it ("latest:cpu_…", "latest") is not repeated ("latest latest:…")."""
        word = self.label.split(":", 1)[0].split()[0] if self.label.strip() else ""
        return self.label if word == self.kind else f"{self.kind} {self.label}"

    @property
    def kind_shown(self) -> str:
        """The kind, or "" where the label already says it (see ``named``)."""
        return "" if self.named == self.label else self.kind


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
    q: float | None = None  # Benjamini–Hochberg adjusted p over the report's timed checks
    cv_base: float | None = None  # robust coefficient of variation of the samples
    cv_head: float | None = None
    detectable: float | None = None  # smallest relative change this pair reveals 9 times in 10
    noisy: bool = False  # a side was timed on a busy host: never counted
    # standard error of log(ratio): the medians' own, and the run-to-run noise if known
    se: float | None = None
    run_sigma: float | None = None  # this check's run-to-run noise on this image and host (A/A)
    runs_base: int = 1  # runs pooled on each side (the run-to-run noise shrinks with √runs)
    runs_head: int = 1

    @property
    def reach(self) -> tuple[float, float]:
        """The (1 - ALPHA) interval of the ratio (the point value where the noise is unknown)."""
        if not self.se:
            return self.ratio, self.ratio
        z = noise.z_two_sided(ALPHA)
        return self.ratio * math.exp(-z * self.se), self.ratio * math.exp(z * self.se)


@dataclass(frozen=True)
class CellChange:
    """One cell of the regression report: how one check's verdict (and timing) moved from
    the base to the head in one environment. ``kind`` is one of spec.py's change kinds; the
    version-to-version differences of named things (components, catalog entries) are
    ``spec.Change``."""

    env: str
    check: str
    kind: str
    base: str  # base verdict ("" when absent)
    head: str
    backend: str = ""
    timing: Timing | None = None
    note: str = ""
    issue: Waiver | None = None
    # the head's result was tampered with (an ``error`` that gates, never inconclusive)
    tampered: bool = False

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
    changes: tuple[CellChange, ...]
    flips: tuple[Flip, ...] = ()
    geomean: tuple[tuple[str, str, float, int], ...] = ()  # (env, backend, ratio, n checks)
    expired: tuple[Waiver, ...] = ()
    today: date | None = None
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def regressed(self) -> bool:
        return any(c.kind in COUNTED for c in self.changes)


#: env, backend, check, status, host class -> the waiver shown and whether it no longer holds
Matcher = Callable[[str, str, str, str, str], "tuple[Waiver, bool] | None"]


def _group(side: Side, pair: dict[str, str]) -> dict[tuple[str, str], list[Obs]]:
    out: dict[tuple[str, str], list[Obs]] = {}
    for o in side.observations:
        out.setdefault((pair.get(o.env, o.env), o.check), []).append(o)
    for obs in out.values():
        obs.sort(key=lambda o: o.attempt)
    return out


def _center(samples: Sequence[float], runs: Sequence[Sequence[float]]) -> float:
    """A side's typical time: the median of its samples; over several runs, the geometric
    mean of each run's median (every run weighs the same, whatever its sample count)."""
    if len(runs) < 2:
        return stats.median(samples)
    medians = [stats.median(r) for r in runs]
    if min(medians) <= 0:
        return stats.median(samples)
    return math.exp(sum(math.log(m) for m in medians) / len(medians))


def compare_timing(
    base: Sequence[float],
    head: Sequence[float],
    bigger_is_better: bool,
    threshold: float,
    seed: int = 0,
    run_sigma: float | None = None,
    base_runs: Sequence[Sequence[float]] = (),
    head_runs: Sequence[Sequence[float]] = (),
) -> Timing | None:
    """The timing verdict for one check, or None when a side has too few samples.
    ``run_sigma``: the check's run-to-run noise (log scale) measured on A/A runs, when known.
    ``base_runs``/``head_runs``: the samples run by run, where a side pools several runs
    (``valorch diff latest:ALIAS:N``); their count divides the run-to-run noise."""
    if len(base) < TIMED_MIN or len(head) < TIMED_MIN:
        return None
    mb, mh = _center(base, base_runs), _center(head, head_runs)
    if mb <= 0 or mh <= 0:
        return None
    ratio = mb / mh if bigger_is_better else mh / mb
    runs = (max(1, len(base_runs)), max(1, len(head_runs)))
    se = noise.ratio_se(base, head, run_sigma, runs)
    probe = Timing(mb, mh, ratio, "bootstrap", None, False, threshold, len(base), len(head))
    probe = replace(
        probe,
        cv_base=noise.cv(base),
        cv_head=noise.cv(head),
        se=se,
        run_sigma=run_sigma,
        detectable=None if se is None else noise.detectable(se, threshold, ALPHA),
        runs_base=runs[0],
        runs_head=runs[1],
    )
    if len(base) >= MWU_MIN and len(head) >= MWU_MIN:
        p = stats.mann_whitney_u(base, head)
        sig = p < ALPHA and noise.beyond_run_noise(ratio, se, run_sigma, ALPHA)
        return replace(probe, method="mwu", p=p, significant=sig, q=p)
    if _timing_kind(replace(probe, significant=True)) == SAME:  # SAME even if significant
        return probe
    lo_b, hi_b = stats.bootstrap_median_ci(base, 1 - ALPHA, seed=seed)
    lo_h, hi_h = stats.bootstrap_median_ci(head, 1 - ALPHA, seed=seed + 1)
    sig = (hi_b < lo_h or hi_h < lo_b) and noise.beyond_run_noise(ratio, se, run_sigma, ALPHA)
    return replace(probe, significant=sig)


def _timing_kind(t: Timing) -> str:
    """Worse (or better) when significant and the change may reach the threshold: its
    (1 - ALPHA) interval passes 1 + threshold. A change of exactly the threshold is then
    found nearly always, not half the time (its measured ratio falls on either side of
    it); a smaller one is found only while its interval still reaches the threshold."""
    lo, hi = t.reach
    if t.ratio > 1 and (t.ratio > 1 + t.threshold or (t.significant and hi > 1 + t.threshold)):
        return SLOWER if t.significant and not t.noisy else NOISE
    if t.ratio < 1 and (
        t.ratio < 1 / (1 + t.threshold) or (t.significant and lo < 1 / (1 + t.threshold))
    ):
        return FASTER if t.significant and not t.noisy else NOISE
    return SAME


def _fdr(changes: list[CellChange]) -> list[CellChange]:
    """Benjamini–Hochberg over the report's U tests: significant means q < FDR. (At 1 % over
    300 checks, ten samples a side could never be significant: the smallest U-test p of
    10 against 10 is 1.6e-4.)"""
    tested = [
        (i, c.timing, c.timing.p)
        for i, c in enumerate(changes)
        if c.timing is not None and c.timing.p is not None
    ]
    qs = noise.benjamini_hochberg([p for _i, _t, p in tested])
    for (i, timing, _p), q in zip(tested, qs, strict=True):
        c = changes[i]
        t = replace(
            timing,
            q=q,
            significant=q < FDR
            and noise.beyond_run_noise(timing.ratio, timing.se, timing.run_sigma, ALPHA),
        )
        note = "noisy host" if t.noisy and _timing_kind(replace(t, noisy=False)) != SAME else c.note
        changes[i] = replace(c, kind=_timing_kind(t), timing=t, note=note)
    return changes


def _status_kind(b: str, h: str) -> str:
    if b == h:
        return SAME
    if b == "pass" and h in FAILING:
        return REGRESSED
    if b in (*FAILING, "xfail", "flaky") and h == "pass":
        return FIXED
    if b == "pass" and h in _LOST:
        return COVERAGE_LOST
    if b in _NOT_RUN and h == "pass":
        return COVERAGE_GAINED
    return CHANGED


def _one(
    key: tuple[str, str],
    bo: list[Obs] | None,
    ho: list[Obs] | None,
    threshold: float,
    match: Matcher | None,
    run_noise: Mapping[tuple[str, str], float] | None = None,
) -> CellChange:
    env, check = key
    change = functools.partial(CellChange, env, check)
    bo, ho = bo or [], ho or []
    any_o = (ho or bo)[-1]
    backend, host = any_o.backend, any_o.host
    if not bo:
        return _new_check(env, check, ho, backend, host, match)
    bv = verdict(o.status for o in bo)
    if not ho:
        hit = _excused(match, env, backend, host, check, "missing") if bv not in _NOT_RUN else None
        if hit is not None:  # it would be coverage lost: a live known issue excuses it
            return change(EXPECTED, bv, "", backend, note=hit.reason, issue=hit)
        if bv in _NOT_RUN:  # it never ran in the baseline either: no coverage to lose
            return change(CHANGED, bv, "", backend, note=f"check not run in head ({bv} in base)")
        return change(COVERAGE_LOST, bv, "", backend, note="check not run in head")
    hv = verdict(o.status for o in ho)
    tampered = any(o.tampered for o in ho)
    if tampered:
        hit = _excused(match, env, backend, host, check, "error")
        if hit is not None:
            return change(EXPECTED, bv, hv, backend, note=hit.reason, issue=hit, tampered=True)
    vb, vh = bo[-1].version, ho[-1].version
    db, dh = bo[-1].definition, ho[-1].definition
    changed = (
        f"check version {vb} → {vh}"
        if vb is not None and vh is not None and vb != vh
        else f"definition changed ({db[:8]} → {dh[:8]}: command, expected output or version)"
        if db and dh and db != dh
        else ""
    )
    note = cut(ho[-1].message) if hv != "pass" else ""
    # a live known issue excuses a failure, and a check no longer run where that loses
    # coverage (passed in a comparable baseline), before any other kind is decided
    if match is not None and (hv in FAILING or (hv in _LOST and bv == "pass" and not changed)):
        known = match(env, backend, check, hv, host)
        if known is not None:
            issue, expired = known
            if not expired:
                return change(EXPECTED, bv, hv, backend, note=issue.reason, issue=issue)
            note = f"waiver expired on {issue.until}: {issue.reason}"
    if changed:  # a failure under a new definition is still one, and says why (its own cut)
        note = f"{changed}: {cut(ho[-1].message)}" if hv != "pass" and ho[-1].message else changed
        return change(NOT_COMPARABLE, bv, hv, backend, note=note, tampered=tampered)
    if "error" in (bv, hv) or tampered:  # else a retry's verdict judges it; forged output never
        return change(INCONCLUSIVE, bv, hv, backend, note=cut(ho[-1].message), tampered=tampered)
    if hv == "flaky":
        return change(FLAKY, bv, hv, backend, note=" → ".join(o.status for o in ho))
    kind = _status_kind(bv, hv)
    if kind == SAME and bv == "pass":
        br, hr = _by_run(bo), _by_run(ho)
        bs, hs = [s for r in br for s in r], [s for r in hr for s in r]
        thr = ho[-1].threshold if ho[-1].threshold is not None else threshold
        sigma = (run_noise or {}).get((ho[-1].env, check))
        seed = zlib.crc32(f"{env}\0{check}".encode())
        t = compare_timing(bs, hs, ho[-1].bigger_is_better, thr, seed, sigma, br, hr)
        if t is not None:
            t = replace(t, noisy=any(o.noisy for o in (*bo, *ho) if o.status == "pass"))
            note = "noisy host" if t.noisy and _timing_kind(replace(t, noisy=False)) != SAME else ""
            return change(_timing_kind(t), bv, hv, backend, timing=t, note=note)
    return change(kind, bv, hv, backend, note=note)  # a partial or still-failing one: its why


def _new_check(
    env: str, check: str, ho: list[Obs], backend: str, host: str, match: Matcher | None
) -> CellChange:
    """A check the baseline does not have: excused, a new failure, inconclusive, flaky, not
    run, or coverage gained."""
    change = functools.partial(CellChange, env, check)
    hv = verdict(o.status for o in ho)
    tampered = any(o.tampered for o in ho)
    hit = _excused(match, env, backend, host, check, "error" if tampered else hv)
    if hit is not None and (hv in FAILING or tampered):
        note = hit.reason
        return change(EXPECTED, "", hv, backend, note=note, issue=hit, tampered=tampered)
    if hv in FAILING or tampered:  # a new check that fails: a failure, never coverage gained
        note = cut(f"new check: {ho[-1].message}" if ho[-1].message else "new check")
        return change(NEW_FAILURE, "", hv, backend, note=note, tampered=tampered)
    if hv == "error":
        return change(INCONCLUSIVE, "", hv, backend, note=cut(ho[-1].message or "new check"))
    if hv == "flaky":
        return change(FLAKY, "", hv, backend, note=" → ".join(o.status for o in ho))
    if hv in _NOT_RUN:  # a new check that did not run: no coverage gained
        return change(CHANGED, "", hv, backend, note=f"new check, {hv}")
    return change(COVERAGE_GAINED, "", hv, backend, note="new check")


def _excused(
    match: Matcher | None, env: str, backend: str, host: str, check: str, status: str
) -> Waiver | None:
    """The waiver that excuses this status, if one does (an expired one excuses nothing)."""
    hit = match(env, backend, check, status, host) if match is not None else None
    return hit[0] if hit is not None and not hit[1] else None


def _by_run(obs: Sequence[Obs]) -> list[tuple[float, ...]]:
    """The samples of the passing attempts, one tuple per run (in the order the runs come)."""
    runs: dict[str, list[float]] = {}
    for o in obs:
        if o.status == "pass" and o.samples:
            runs.setdefault(o.run, []).extend(o.samples)
    return [tuple(v) for v in runs.values()]


def compare(
    base: Side,
    head: Side,
    threshold: float = DEFAULT_THRESHOLD,
    match: Matcher | None = None,
    expired: Iterable[Waiver] = (),
    today: date | None = None,
    run_noise: Mapping[tuple[str, str], float] | None = None,
) -> Report:
    """Every (environment, check) of either side → one CellChange; then flips, geomeans, counts."""
    pair: dict[str, str] = {}
    be, he = base.envs, head.envs
    if len(be) == 1 and len(he) == 1 and be != he:  # one image against another
        pair = dict.fromkeys((be[0], he[0]), f"{be[0]} → {he[0]}")
    bg, hg = _group(base, pair), _group(head, pair)
    keys = list(dict.fromkeys([*bg, *hg]))
    changes = tuple(
        _fdr([_one(k, bg.get(k), hg.get(k), threshold, match, run_noise) for k in keys])
    )
    flips = tuple(
        Flip(c.env, c.check, c.base, c.head)
        for c in changes
        if c.base and c.head and SYMBOL.get(c.base) != SYMBOL.get(c.head)
    )
    ratios: dict[tuple[str, str], list[float]] = {}
    for c in changes:
        if c.timing is not None:
            ratios.setdefault((c.env, c.backend), []).append(c.timing.ratio)
    geo = tuple((env, be_, stats.geomean(r), len(r)) for (env, be_), r in ratios.items())
    counts = dict(Counter(c.kind for c in changes))
    return Report(base, head, threshold, changes, flips, geo, tuple(expired), today, counts)
