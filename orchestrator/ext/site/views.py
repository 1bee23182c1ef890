"""What the site shows, computed from the rows of store/site_queries.py (pure: no
I/O, no SQL). Results are reduced as they stream in (a median and quartiles per
timed result, not the samples), so a 300,000-result store fits in memory. A result's
verdict, a run's environment and an id's slug are made once, not per page that asks
(millions of calls on a large site: docs/benchmarks.md, "Static site build")."""

from __future__ import annotations

import functools
import re
import zlib
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, NamedTuple

from orchestrator.ext.site.quartiles import summary
from orchestrator.ext.site.summaries import Summaries
from orchestrator.matrix.model import FAILING, verdict
from orchestrator.regression import changepoints, noise
from orchestrator.render.repro import command
from orchestrator.store import site_queries
from orchestrator.store.coltypes import stored_metrics, stored_samples

DEFAULT_THRESHOLD = 0.05
BAD = (*FAILING, "partial")  # unsupported is not installed: not a failure (docs/statuses.md)


@functools.lru_cache(maxsize=1 << 16)  # the same check ids, twice per result on the run pages
def slug(text: str) -> str:
    """A file name for an id; ids that needed changing get a short hash (no collisions)."""
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", text)[:120]
    return safe if safe == text else f"{safe}-{zlib.crc32(text.encode()):08x}"


@dataclass(slots=True)
class Res:
    """One check of one run: its attempts reduced to what the pages show. Slotted: a large
    store has 300,000 of them, and the page workers, forked, copy every page of memory whose
    objects they touch (a reference count is a write), so the smaller the fewer."""

    check: str
    version: int
    suite: str
    statuses: list[str]
    duration: float
    message: str
    median: float | None = None
    q1: float | None = None
    q3: float | None = None
    n: int = 0
    cv: float | None = None
    threshold: float | None = None
    load: float | None = None
    pressure: float | None = None
    governor: str | None = None
    noisy: bool = False
    library: str | None = None  # what the evidence says ran (the last attempt that names one)
    # (attempts it was computed from, verdict): every page asks, 2.7 million times a large site
    _verdict: tuple[int, str] | None = field(default=None, repr=False, compare=False)

    @property
    def verdict(self) -> str:
        """The verdict of its attempts, computed again only when an attempt was added."""
        known = self._verdict
        if known is None or known[0] != len(self.statuses):
            statuses = tuple(self.statuses)
            v = _VERDICTS.get(statuses)
            if v is None:
                v = _VERDICTS[statuses] = verdict(statuses)
            known = self._verdict = (len(statuses), v)
        return known[1]


_VERDICTS: dict[tuple[str, ...], str] = {}  # attempts → verdict: a few dozen kinds per site


@dataclass
class RunV:
    row: dict[str, Any]
    results: dict[str, Res] = field(default_factory=dict)  # check id → result
    # its square in the status strips, escaped (ext/site/page_data.py): made on first use
    strip_parts: tuple[Any, Any] | None = field(default=None, repr=False, compare=False)

    @property
    def id(self) -> str:
        return str(self.row["id"])

    @functools.cached_property
    def env(self) -> str:
        return f"{self.row['alias']} @ {self.row['host']}"

    @functools.cached_property  # its run, image and list pages all show them
    def counts(self) -> Counter[str]:
        return Counter(r.verdict for r in self.results.values())

    def load(self) -> dict[str, Any]:
        """The host's load while this run's timed checks ran."""
        timed = [r for r in self.results.values() if r.n]
        loads = [r.load for r in timed if r.load is not None]
        pressures = [r.pressure for r in timed if r.pressure is not None]
        return {
            "timed": len(timed),
            "noisy": sum(r.noisy for r in timed),
            "load_min": min(loads, default=None),
            "load_max": max(loads, default=None),
            "pressure_max": max(pressures, default=None),
            "governors": sorted({r.governor for r in timed if r.governor}),
        }


def load_runs(
    run_rows: list[dict[str, Any]],
    checks: dict[int, dict[str, Any]],
    results: Iterable[site_queries.ResultLine],
    summaries: Summaries | None = None,
) -> dict[str, RunV]:
    """Every run with its results reduced (a median and quartiles per timed result, not
    the samples). ``summaries``: those made by another process meanwhile
    (ext/site/summaries.py); any it does not have are made here, the same way."""
    runs = {r["id"]: RunV(r) for r in run_rows}
    # check pk → (check id, version, the suite of a result without a task)
    ids = {
        pk: (c["check_id"], c["version"], c["check_id"].split(".", 1)[0])
        for pk, c in checks.items()
    }
    run_id, run = None, None
    for line in results:
        result_id, rid, pk, _attempt, status, duration, message, metrics, raw, suite, library = line
        if rid != run_id:  # a run's results mostly come together
            run_id, run = rid, runs.get(rid)
        if run is None:
            continue
        cid, version, first = ids[pk]
        res = run.results.get(cid)
        if res is None:
            res = run.results[cid] = Res(cid, version, suite or first, [], 0.0, "")
        res.statuses.append(status)
        if library:
            res.library = library
        if duration:
            res.duration += duration
        if message and (status != "pass" or not res.message):
            res.message = message
        if status != "pass" or not raw:
            continue
        made = summaries.get(result_id) if summaries is not None else None
        if made is not None:
            res.median, res.q1, res.q3, res.cv, res.n = made
        else:
            samples = stored_samples(raw)
            if len(samples) < 3:
                continue
            res.median, res.q1, res.q3, res.cv = summary(samples)
            res.n = len(samples)
        m = stored_metrics(metrics) or {}
        if not m:  # what the lines below make of no metrics, without asking
            res.threshold = res.load = res.pressure = res.governor = None
            res.noisy = False
            continue
        thr = m.get("threshold")
        res.threshold = (
            float(thr)
            if isinstance(thr, (int, float)) and not isinstance(thr, bool) and thr > 0
            else None
        )
        res.load, res.noisy = noise.host_load(m), noise.noisy(m)
        p = m.get("cpu_pressure")
        res.pressure = float(p) if isinstance(p, (int, float)) else None
        res.governor = str(m["cpu_governor"]) if m.get("cpu_governor") else None
    return runs


class Point(NamedTuple):
    """One run's timing in a history (a tuple: 300,000 of them per large site)."""

    run_id: str
    when: datetime
    median: float
    q1: float
    q3: float
    n: int
    noisy: bool


@dataclass
class History:
    """A timed check in one environment over time, with what was detected in it."""

    check: str
    env: str
    points: list[Point]
    threshold: float
    bigger_is_better: bool = False
    analysis: changepoints.Analysis | None = None
    # shifts the detector found but `valorch diff` of their two runs did not call a change:
    # (the shift, the diff's kind for that check, its base run)
    rejected: tuple[tuple[changepoints.Shift, str, str], ...] = ()


def histories(runs: dict[str, RunV], bigger: dict[str, bool]) -> dict[str, list[History]]:
    """check id → its timed histories (one per environment and check version), analysed."""
    out: dict[tuple[str, int, str], History] = {}
    make = Point._make
    for run in sorted(runs.values(), key=lambda r: (r.row["started"], r.id)):
        rid, started, env = run.id, run.row["started"], run.env
        for res in run.results.values():
            median = res.median
            if median is None or median <= 0 or res.q1 is None or res.q3 is None:
                continue  # untimed (the quartiles come with the median)
            key = (res.check, res.version, env)
            h = out.get(key)
            if h is None:
                h = out[key] = History(
                    res.check,
                    env + (f" (v{res.version})" if res.version != 1 else ""),
                    [],
                    res.threshold or DEFAULT_THRESHOLD,
                    bigger.get(res.check, False),
                )
            h.points.append(make((rid, started, median, res.q1, res.q3, res.n, res.noisy)))
    per: dict[str, list[History]] = {}
    for h in out.values():
        # a timing taken on a busy host is left out of the trend (it is on its run page)
        if sum(not p.noisy for p in h.points) >= 4:
            h.points = [p for p in h.points if not p.noisy]
        h.analysis = changepoints.analyse(
            [p.median for p in h.points], h.threshold, h.bigger_is_better
        )
        per.setdefault(h.check, []).append(h)
    return per


@dataclass(frozen=True)
class ChangeV:
    check: str
    env: str
    kind: str
    direction: str
    ratio: float
    steps: int
    first_run: str  # the first run after the last good (or bad) level
    run: str  # the run where the change passed the threshold
    when: datetime
    since: datetime
    # the last run at the level before: `valorch diff BASE_RUN RUN` judges the change
    base_run: str = ""


def changes(per_check: dict[str, list[History]]) -> list[ChangeV]:
    """Every detected shift, newest first."""
    out = []
    for hs in per_check.values():
        for h in hs:
            for s in h.analysis.shifts if h.analysis else ():
                a, b = h.points[s.start], h.points[s.end]
                out.append(
                    ChangeV(
                        h.check,
                        h.env,
                        s.kind,
                        s.direction,
                        s.ratio,
                        s.steps,
                        a.run_id,
                        b.run_id,
                        b.when,
                        a.when,
                        h.points[s.start - 1].run_id if s.start > 0 else "",
                    )
                )
    out.sort(key=lambda c: (c.when, c.check), reverse=True)
    return out


@dataclass(frozen=True)
class FlipV:
    """A check's verdict flipping between passing and failing from one run to the next in
    one environment (pass → fail, or fail → pass)."""

    check: str
    env: str
    before: str
    after: str
    prev_run: str
    run: str
    when: datetime


def flips(runs: dict[str, RunV]) -> list[FlipV]:
    """Every pass ↔ failing flip between consecutive finished runs of a check in an
    environment (inconclusive and skipped results neither flip nor interrupt), newest first."""
    last: dict[tuple[str, str], tuple[str, str]] = {}  # (check, env) → (verdict, run)
    out = []
    for run in sorted(runs.values(), key=lambda r: (r.row["started"], r.id)):
        if run.row["state"] not in ("done", "failed"):  # not finished
            continue
        # a run holds each check once, so its results' order changes nothing below (each
        # (check, env) key is seen once per run) nor the list's order (sorted at the end,
        # stably, with the runs in order): sorting them was a third of this
        for cid, res in run.results.items():
            v = res.verdict
            if v != "pass" and v not in BAD:
                continue
            key = (cid, run.env)
            prev = last.get(key)
            if prev is not None and (prev[0] == "pass") != (v == "pass"):
                out.append(FlipV(cid, run.env, prev[0], v, prev[1], run.id, run.row["started"]))
            last[key] = (v, run.id)
    out.sort(key=lambda f: (f.when, f.check), reverse=True)
    return out


def repro(run: RunV, res: Res, local: bool) -> str:
    """The command that re-runs just this check on this image (by digest where one is pinned)."""
    row = run.row
    return command(
        alias=row["alias"],
        reference=row["reference"],
        digest=row["digest"],
        check=res.check,
        suite=res.suite,
        local=local,
        host=row["executor"] == "host",
        cpu_only=row["cpu_only"],
    )


def inventory_diff(
    old: dict[str, tuple[str, str]], new: dict[str, tuple[str, str]]
) -> list[tuple[str, str, str]]:
    """(component, old value, new value) for what differs; '' where absent."""
    out = []
    for comp in sorted(set(old) | set(new)):
        a, b = old.get(comp, ("", ""))[0], new.get(comp, ("", ""))[0]
        if a != b:
            out.append((comp, a, b))
    return out
