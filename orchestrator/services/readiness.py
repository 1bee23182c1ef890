"""Release readiness of a job: every check × environment's pass count over a window of runs
against a basis (an older window of the same job, a published matrix version, a baseline, a
run or a batch), judged once by regression/readiness.py into one typed decision; each
regressed cell with its triage and any acceptance beside it. docs/readiness.md."""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, time, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy.orm import Session, sessionmaker

from .. import words
from ..errors import InputError
from ..hostclass import host_class
from ..matrix.model import verdict
from ..regression import readiness as rd
from ..regression.triage import Triage
from ..regression.waivers import Waivers
from ..store import bulk, queries
from ..store import readiness_queries as rq
from .outcome import GATE_FAILED, Outcome, Said, passed

UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*$")
MAX_SECONDS = 100 * 366 * 86400  # a century: past that no store holds a run
Key = tuple[str, str, str]  # check, alias, arch ("*": any arch)


@dataclass(frozen=True)
class Readiness:
    """What ``readiness`` (and ``qualify --readiness``) prints: the decision and its context."""

    job: str
    basis: str
    start: datetime
    end: datetime
    options: rd.Options
    decision: rd.Decision
    candidate_runs: tuple[str, ...]
    basis_runs: tuple[str, ...]
    triage: dict[tuple[str, str], Triage] = field(default_factory=dict)  # (check, env label)
    accepted: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)


def duration(text: str, flag: str) -> timedelta:
    """``7d``, ``36h``, ``90m``, ``2w`` as a timedelta; an InputError naming ``flag``
    (``--basis window:`` is shown joined to its value)."""
    sep = "" if flag.endswith(":") else " "
    m = _DURATION.match(text or "")
    if not m or float(m.group(1)) <= 0:
        raise InputError(
            f"{flag}{sep}{text}: not a duration",
            f"write a positive number with a unit: 90m, 36h, 7d or 2w (e.g. {flag}{sep}7d)",
        )
    seconds = float(m.group(1)) * UNITS[m.group(2)]
    if seconds > MAX_SECONDS:
        raise InputError(
            f"{flag}{sep}{text}: longer than a century",
            f"write a duration of at most 100 years (e.g. {flag}{sep}52w)",
        )
    return timedelta(seconds=seconds)


def job_name(job: str) -> str:
    """A job's name, or the ``name:`` of a job YAML file."""
    path = Path(job)
    if job.endswith((".yaml", ".yml")) and path.is_file():
        from .. import yamlio

        name = (yamlio.load(path).data or {}).get("name")
        if not isinstance(name, str) or not name:
            raise InputError(f"--job {job}: the file has no 'name:'", "name the job in its YAML")
        return name
    return job


def _env(row: dict[str, Any]) -> rd.Env:
    return rd.Env(row["alias"], row["backend"] or "", host_class(row["spec"]), row["family"] or "")


def _declaration(check: str, spec: dict[str, Any] | None) -> str | None:
    """What a declared command check runs, without its id: two ids with one declaration are
    one check renamed. None for checks no job declares."""
    if not spec or not check.startswith("command."):
        return None
    name, _, param = check.removeprefix("command.").partition("[")
    for c in spec.get("commands") or ():
        if isinstance(c, dict) and c.get("id") == name:
            body = {k: v for k, v in c.items() if k not in ("id", "feature")}
            blob = json.dumps([body, param], sort_keys=True, default=str)
            return hashlib.sha256(blob.encode()).hexdigest()[:16]
    return None


@dataclass
class _Seen:
    """One side's results of one cell: (run, final verdict), declarations, definitions."""

    env: rd.Env
    verdicts: list[tuple[str, str]] = field(default_factory=list)
    declared: set[str] = field(default_factory=set)
    definitions: set[str] = field(default_factory=set)
    started: list[datetime] = field(default_factory=list)


def _collect(
    session: Session, rows: Sequence[dict[str, Any]], only: set[tuple[str, str]] | None = None
) -> dict[Key, _Seen]:
    """Each run counted once per cell by its final verdict (``only``: the (check, run) pairs
    to count, a published matrix's)."""
    env = {r["id"]: _env(r) for r in rows}
    when = {r["id"]: r["started"] for r in rows}
    got = rq.results(session, list(env))
    specs = rq.suite_specs(session, [g[4] for g in got])
    per: dict[tuple[str, str], list[tuple[str, int | None, str | None]]] = {}
    for run, check, _attempt, status, task, definition in got:
        if only is None or (check, run) in only:
            per.setdefault((check, run), []).append((status, task, definition))
    return seen_of(
        Record(
            run,
            check,
            env[run],
            when[run],
            tuple(a[0] for a in attempts),
            next(
                (
                    d
                    for a in attempts
                    if a[1] is not None
                    if (d := _declaration(check, specs.get(a[1])))
                ),
                None,
            ),
            next((a[2] for a in attempts if a[2]), None),
        )
        for (check, run), attempts in per.items()
    )


@dataclass(frozen=True)
class Record:
    """One run's attempts of one check (in attempt order), where it ran and what it was."""

    run: str
    check: str
    env: rd.Env
    started: datetime
    statuses: tuple[str, ...]
    declaration: str | None = None  # the declaration without the id (renames)
    definition: str | None = None  # spec.definition_hash


def seen_of(records: Iterable[Record]) -> dict[Key, _Seen]:
    """Each run counted once per cell, by its final verdict (pure)."""
    seen: dict[Key, _Seen] = {}
    for r in records:
        s = seen.setdefault((r.check, r.env.alias, r.env.arch), _Seen(r.env))
        s.verdicts.append((r.run, verdict(list(r.statuses))))
        s.started.append(r.started)
        if r.declaration:
            s.declared.add(r.declaration)
        if r.definition:
            s.definitions.add(r.definition)
    return seen


def cells_of(
    cand: dict[Key, _Seen], base: dict[Key, _Seen]
) -> tuple[list[rd.Cell], dict[tuple[str, str], _Seen]]:
    """The cells to judge (renames followed), and each cell's basis results (pure)."""
    paired = _pair(cand, base)
    cells = [
        rd.Cell(key[0], env, _count(s), _count(b), notes=tuple(notes))
        for key, env, s, b, notes in paired
    ]
    basis = {
        (c.check, c.env.label): b for c, (_k, _e, _s, b, _n) in zip(cells, paired, strict=True) if b
    }
    return cells, basis


def _job_side(
    session: Session, job: str, lo: datetime, hi: datetime
) -> tuple[dict[Key, _Seen], tuple[str, ...]]:
    rows = rq.job_runs(session, job, lo, hi)
    return _collect(session, rows), tuple(r["id"] for r in rows)


def _matrix_side(session: Session, mv: Any) -> tuple[dict[Key, _Seen], tuple[str, ...]]:
    """A published matrix version: the runs each cell records, counted from the store; a
    cell whose runs are not stored (an imported matrix) counts once, by its verdict."""
    wanted = {(c.row, str(r)) for c in mv.cells for r in (c.runs or ())}
    rows = rq.runs_env(session, sorted({r for _c, r in wanted})) if wanted else []
    stored = {r["id"] for r in rows}
    seen = _collect(session, rows, {(c, r) for c, r in wanted if r in stored})
    covered = {(k[0], seen[k].env.alias) for k in seen}
    for c in mv.cells:
        if (c.row, c.column) in covered or any(str(r) in stored for r in (c.runs or ())):
            continue
        v = verdict([str(s) for s in (c.statuses or [c.verdict])])
        env = rd.Env(c.column, str((c.meta or {}).get("backend", "")), "*")
        s = seen.setdefault((c.row, c.column, "*"), _Seen(env))
        s.verdicts.append((f"{mv.version}:{c.column}", v))
    runs = tuple(sorted(stored)) or ((mv.version,) if mv.cells else ())
    return seen, runs


def _named_side(session: Session, basis: str) -> tuple[dict[Key, _Seen], tuple[str, ...]]:
    base = bulk.baseline(session, basis)
    version = basis if base is None else None if base.run_id else base.matrix_version
    mv = bulk.matrix_version(session, version) if version is not None else None
    if mv is not None:
        return _matrix_side(session, mv)
    if base is not None and version is not None:
        raise InputError(
            f"--basis {basis}: baseline names matrix version '{version}', which is not stored",
            "publish it again, or point the baseline elsewhere: valorch baseline set NAME RUN",
        )
    from .diff import resolve

    side = resolve(session, basis)  # a baseline's run, a run, a batch; or exit 2 naming them
    rows = rq.runs_env(session, side.runs)
    return _collect(session, rows), tuple(side.runs)


def _count(s: _Seen | None) -> rd.Count:
    return rd.count(s.verdicts) if s is not None else rd.Count()


def _pair(
    cand: dict[Key, _Seen], base: dict[Key, _Seen]
) -> list[tuple[Key, rd.Env, _Seen | None, _Seen | None, list[str]]]:
    """Candidate and basis cells side by side: a basis cell of any arch (``*``, a published
    matrix) meets its alias's cells; a check renamed (the same declaration under another id,
    neither id on the other side) is followed; a changed definition is noted."""
    out: list[tuple[Key, rd.Env, _Seen | None, _Seen | None, list[str]]] = []
    used: set[Key] = set()
    for key, s in sorted(cand.items()):
        b = base.get(key) or base.get((key[0], key[1], "*"))
        if b is not None:
            used.add(key if key in base else (key[0], key[1], "*"))
        out.append((key, s.env, s, b, []))
    cand_ids = {(k[0], k[1]) for k in cand}
    base_ids = {(k[0], k[1]) for k in base}
    for i, (key, env, mine, b, _notes) in enumerate(out):
        if b is not None or mine is None or not mine.declared or key[:2] in base_ids:
            continue
        for bkey, bs in sorted(base.items()):
            if (
                bkey not in used
                and bkey[1] == key[1]
                and bkey[2] in (key[2], "*")
                and bkey[:2] not in cand_ids
                and bs.declared & mine.declared
            ):
                used.add(bkey)
                out[i] = (key, env, mine, bs, [f"renamed from {bkey[0]} (the same declaration)"])
                break
    for _key, _e, got, b, notes in out:
        if (
            not notes
            and got
            and b
            and got.definitions
            and b.definitions
            and not got.definitions & b.definitions
        ):
            old, new = sorted(b.definitions)[0][:8], sorted(got.definitions)[0][:8]
            notes.append(f"definition changed ({old} → {new}): compared across the change")
    for bkey, bs in sorted(base.items()):
        if bkey not in used:
            out.append((bkey, bs.env, None, bs, []))
    return out


def _in_force(a: Any, lo: datetime, hi: datetime) -> bool:
    """Whether acceptance ``a`` was in force at some time in [lo, hi] (UTC): from when it
    was recorded to the end of its last day (``until`` is a whole day, inclusive)."""
    ends = datetime.combine(a.until + timedelta(days=1), time.min)
    return bool(a.created <= hi and ends > lo)


def _look_back(
    session: Session,
    job: str,
    cells: list[rd.Cell],
    seen_basis: dict[tuple[str, str], _Seen],
    found: Sequence[Any],
    span: timedelta,
) -> list[rd.Cell]:
    """Sippy's rule (regressionallowances.go matchBaseRegression): an accepted regression does
    not become the basis. A cell whose basis runs fall while an acceptance covering it was in
    force is compared with the job's runs in the ``span`` before the acceptance was recorded,
    when those passed more often."""
    cache: dict[tuple[datetime, datetime], dict[Key, _Seen]] = {}
    out = []
    for c in cells:
        s = seen_basis.get((c.check, c.env.label))
        mine = [
            a
            for a in found
            if a.created is not None and a.covers(c.check, c.env.alias, c.env.arch, None, None)
        ]
        if s is None or not mine or not s.started or c.basis.total == 0:
            out.append(c)
            continue
        lo, hi = min(s.started), max(s.started)
        held = [a for a in mine if _in_force(a, lo, hi)]
        if not held:
            out.append(c)
            continue
        ids = ", ".join(f"#{a.id}" for a in held)
        note = f"the basis held accepted regression {ids}; the runs before it passed no more: kept"
        basis = c.basis
        end = min(a.created for a in held)
        start = end - span
        if (start, end) not in cache:
            cache[(start, end)] = _job_side(session, job, start, end)[0]
        got = cache[(start, end)]
        prev = got.get((c.check, c.env.alias, c.env.arch)) or got.get((c.check, c.env.alias, "*"))
        earlier = _count(prev)
        if earlier.total and (earlier.rate or 0) > (c.basis.rate or 0):
            basis = earlier
            note = (
                f"the basis held accepted regression {ids}: compared with the runs of "
                f"{start:%Y-%m-%d %H:%M} – {end:%Y-%m-%d %H:%M}, before it was accepted, "
                f"instead ({earlier.passed}/{earlier.total})"
            )
        out.append(replace(c, basis=basis, notes=(*c.notes, note)))
    return out


def evaluate(
    factory: sessionmaker[Session],
    job: str,
    basis: str,
    window: str = "7d",
    options: rd.Options | None = None,
    issues: Waivers | None = None,
) -> Readiness:
    """The decision, with the waivers beside the cells they cover (the store's and, with
    ``issues``, a known-issues file's)."""
    from ..regression.waivers import decide
    from ..render.waivers import noted
    from . import accept

    opts = options or rd.Options()
    span = duration(window, "--window")
    name = job_name(job)
    end = queries.now()
    try:
        start = end - span
    except OverflowError:
        raise InputError(
            f"--window {window}: reaches before the calendar", "use e.g. --window 7d"
        ) from None
    with factory() as session:
        found = [*(issues.entries if issues else ()), *accept.live(session)]  # not the revoked
        every_run = rq.job_runs(session, name, None, None)
        if not every_run:
            known = rq.known_jobs(session)
            raise InputError(
                f"--job {job}: no finished runs of job '{name}' in the results database",
                f"jobs with runs: {', '.join(known[:20]) or 'none'}; run it: valorch run --job FILE",
            )
        lengths = [r["ended"] - r["started"] for r in every_run if r["ended"] is not None]
        if lengths and span < min(lengths):
            raise InputError(
                f"--window {window} is shorter than one run of the job (the shortest took "
                f"{min(lengths).total_seconds():.0f} s)",
                "use a window that holds several runs, e.g. --window 7d",
            )
        if basis.startswith("window:"):
            bspan = duration(basis.partition(":")[2], "--basis window:")
            try:
                base, base_runs = _job_side(session, name, start - bspan, start)
            except OverflowError:
                raise InputError(
                    f"--basis {basis}: reaches before the calendar", "use e.g. --basis window:14d"
                ) from None
            back = bspan
        else:
            base, base_runs = _named_side(session, basis)
            back = span
        in_basis = set(base_runs)
        rows = [r for r in rq.job_runs(session, name, start, end) if r["id"] not in in_basis]
        cand = _collect(session, rows)
        cells, seen_basis = cells_of(cand, base)
        cells = _look_back(session, name, cells, seen_basis, found, back)
    live, notes = set(), {}
    for c in rd.judge(cells, opts):
        if c.status not in rd.FAILING_STATUSES:
            continue
        d = decide(found, c.check, c.env.alias, c.env.arch, end, rate=c.candidate.rate)
        got = noted(d)
        if got:
            notes[(c.check, c.env.label)] = got
            if got.get("live"):
                live.add((c.check, c.env.label))
    decision = rd.decide(cells, len(rows), len(base_runs), opts, frozenset(live))
    return Readiness(
        name,
        basis,
        start,
        end,
        opts,
        decision,
        tuple(r["id"] for r in rows),
        base_runs,
        accepted=notes,
    )


def decide(
    factory: sessionmaker[Session],
    job: str,
    basis: str,
    window: str = "7d",
    options: rd.Options | None = None,
    issues: Waivers | None = None,
) -> Readiness:
    """The readiness report a command prints, with its typed decision (``.decision``: the
    verdict, exit code, reasons and cells) and each regressed cell's triage: the class most
    of its failing runs have (stored triage), as the newest failing run of that class told
    it (its counts are the longest history)."""
    from . import triage as triage_service

    report = evaluate(factory, job, basis, window, options, issues)
    regressed = [
        c
        for c in report.decision.cells
        if c.status in (rd.EXTREME_REGRESSION, rd.SIGNIFICANT_REGRESSION)
    ]
    failing = [r for c in regressed for r in c.candidate.failed_runs]
    if not failing:
        return report
    stored = triage_service.stored_many(factory, failing)
    order = {run: i for i, run in enumerate(report.candidate_runs)}  # oldest first
    found: dict[tuple[str, str], Triage] = {}
    for c in regressed:
        runs = sorted(c.candidate.failed_runs, key=lambda r: order.get(r, -1))
        got = [stored[r][c.check] for r in runs if c.check in stored.get(r, {})]
        if got:
            top = Counter(t.cls for t in got).most_common(1)[0][0]
            found[(c.check, c.env.label)] = [t for t in got if t.cls == top][-1]
    return replace(report, triage=found)


def outcome(report: Readiness) -> Outcome:
    """The exit and closing lines, from the decision and nothing else."""
    d = report.decision
    if not d.ready:
        return Outcome(
            GATE_FAILED,
            "regressed",
            "; ".join(d.reasons),
            (
                Said(
                    "fail",
                    f"not ready: job {report.job}: {d.reasons[0]}"
                    + (f" (and {len(d.reasons) - 1} more)" if len(d.reasons) > 1 else ""),
                ),
            ),
        )
    accepted = d.counts.get("accepted", 0)
    note = f" ({words.count(accepted, 'regressed cell')} accepted)" if accepted else ""
    return passed(d.reasons[0], (Said("pass", f"ready: job {report.job}: {d.reasons[0]}{note}"),))


def summary(report: Readiness) -> dict[str, Any]:
    """What a qualification records of its readiness gate (qualify.json): the decision, the
    regressed and gating cells, and the live acceptances that let regressions ship (``attest
    --qualify`` names them in the VSA)."""
    d = report.decision
    return {
        "readiness": {
            "basis": report.basis,
            "verdict": d.verdict,
            "exit_code": d.exit_code,
            "reasons": list(d.reasons),
            # the cells whose status fails the gate, accepted or not
            "red": [f"{c.check} {c.env.label}" for c in d.cells if c.status in rd.FAILING_STATUSES],
            "gating": [f"{c.check} {c.env.label}" for c in d.gating],
        },
        "accepted": [
            {"check": check, "env": env, **{k: a[k] for k in ("by", "reason", "until")}}
            for (check, env), a in sorted(report.accepted.items())
            if a.get("live")
        ],
    }
