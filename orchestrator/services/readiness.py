"""Release readiness of a job: every check × environment's pass count over a window of runs
against a basis (a published matrix version, a baseline, a run or batch, or an older window
of the same job), judged by regression/readiness.py; each red cell with its triage."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy.orm import Session, sessionmaker

from ..errors import InputError
from ..hosts.match import host_class
from ..matrix.model import verdict
from ..regression import readiness as rd
from ..regression.triage import Triage
from ..store import queries
from ..store import readiness_queries as rq
from .outcome import GATE_FAILED, Outcome, Said, passed

UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*$")
Key = tuple[str, rd.Env]


@dataclass(frozen=True)
class Readiness:
    job: str
    basis: str
    start: datetime
    end: datetime
    alpha: float
    min_runs: int
    why_min: str
    cells: tuple[rd.Cell, ...]
    candidate_runs: tuple[str, ...]
    basis_runs: tuple[str, ...]
    triage: dict[tuple[str, str], Triage] = field(default_factory=dict)  # (check, env label)
    accepted: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)

    @property
    def red(self) -> list[rd.Cell]:
        return [c for c in self.cells if c.state == rd.RED]

    @property
    def gating(self) -> list[rd.Cell]:
        """Red cells no live acceptance covers."""
        return [
            c for c in self.red if not self.accepted.get((c.check, c.env.label), {}).get("live")
        ]


def duration(text: str, flag: str) -> timedelta:
    """``7d``, ``36h``, ``90m``, ``2w`` as a timedelta; an InputError naming ``flag``."""
    m = _DURATION.match(text or "")
    if not m or float(m.group(1)) <= 0:
        raise InputError(
            f"{flag} '{text}': not a duration",
            f"write a positive number with a unit: 90m, 36h, 7d or 2w (e.g. {flag} 7d)",
        )
    return timedelta(seconds=float(m.group(1)) * UNITS[m.group(2)])


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


def _counts(session: Session, rows: Sequence[dict[str, Any]]) -> dict[Key, rd.Count]:
    env = {r["id"]: _env(r) for r in rows}
    per: dict[tuple[str, str], list[str]] = {}
    for run, check, _attempt, status in rq.statuses(session, list(env)):
        per.setdefault((check, run), []).append(status)
    seen: dict[Key, list[tuple[str, str]]] = {}
    for (check, run), sts in per.items():
        seen.setdefault((check, env[run]), []).append((run, verdict(sts)))
    return {k: rd.count(v) for k, v in seen.items()}


def _matrix_counts(side: Any) -> dict[Key, rd.Count]:
    """A published matrix (or a baseline naming one): each stored status of a cell is a run."""
    seen: dict[Key, list[tuple[str, str]]] = {}
    for o in side.observations:
        key = (o.check, rd.Env(o.env, o.backend, "*"))
        seen.setdefault(key, []).append((f"{side.label}#{o.attempt}", o.status))
    return {k: rd.count(v) for k, v in seen.items()}


def _basis(
    session: Session, job: str, basis: str, start: datetime
) -> tuple[dict[Key, rd.Count], tuple[str, ...]]:
    if basis.startswith("window:"):
        span = duration(basis.partition(":")[2], "--basis window:")
        rows = rq.job_runs(session, job, start - span, start)
        if not rows:
            raise InputError(
                f"--basis {basis}: no finished runs of job '{job}' in the {basis[7:]} before "
                f"{start:%Y-%m-%d %H:%M}",
                "widen the basis window, or name a matrix version or baseline",
            )
        return _counts(session, rows), tuple(r["id"] for r in rows)
    from .diff import resolve

    side = resolve(session, basis)
    if side.runs:
        rows = rq.runs_env(session, side.runs)
        return _counts(session, rows), tuple(side.runs)
    return _matrix_counts(side), ()


def _lookup(basis: dict[Key, rd.Count], check: str, env: rd.Env) -> rd.Count:
    got = basis.get((check, env))
    if got is not None:
        return got
    loose = [
        c for (k, e), c in basis.items() if k == check and e.alias == env.alias and e.arch == "*"
    ]
    return loose[0] if loose else rd.Count()


def _window_check(rows: Sequence[dict[str, Any]], window: timedelta, text: str) -> None:
    lengths = [r["ended"] - r["started"] for r in rows if r["ended"] is not None]
    if lengths and window < min(lengths):
        raise InputError(
            f"--window {text} is shorter than one run of the job (the shortest took "
            f"{min(lengths).total_seconds():.0f} s)",
            "use a window that holds several runs, e.g. --window 7d",
        )


def evaluate(
    factory: sessionmaker[Session],
    job: str,
    basis: str,
    window: str = "7d",
    alpha: float = rd.ALPHA,
    now: datetime | None = None,
) -> Readiness:
    if not 0 < alpha < 1:
        raise InputError(f"--alpha {alpha:g} is outside (0, 1)", "use e.g. --alpha 0.05")
    span = duration(window, "--window")
    name = job_name(job)
    end = now or queries.now()
    start = end - span
    with factory() as session:
        every = rq.job_runs(session, name, None, None)
        if not every:
            known = rq.known_jobs(session)
            raise InputError(
                f"--job {job}: no finished runs of job '{name}' in the results database",
                f"jobs with runs: {', '.join(known[:20]) or 'none'}; run it: valorch run --job FILE",
            )
        _window_check(every, span, window)
        base, base_runs = _basis(session, name, basis, start)
        rows = [r for r in rq.job_runs(session, name, start, end) if r["id"] not in set(base_runs)]
        cand = _counts(session, rows)
    cells = rd.judge(
        [
            rd.Cell(check, env, got, _lookup(base, check, env))
            for (check, env), got in sorted(cand.items(), key=lambda kv: (kv[0][0], kv[0][1].label))
        ],
        alpha,
    )
    return Readiness(
        name,
        basis,
        start,
        end,
        alpha,
        rd.min_runs(alpha),
        rd.why_min(alpha),
        tuple(cells),
        tuple(r["id"] for r in rows),
        base_runs,
    )


def with_triage(factory: sessionmaker[Session], report: Readiness) -> Readiness:
    """Each red cell's triage: the class most of its failing runs have (their stored triage)."""
    from . import triage as triage_service

    failing = [r for c in report.red for r in c.candidate.failed_runs]
    if not failing:
        return report
    stored = triage_service.stored_many(factory, failing)
    found: dict[tuple[str, str], Triage] = {}
    for c in report.red:
        got = [stored[r][c.check] for r in c.candidate.failed_runs if c.check in stored.get(r, {})]
        if got:
            top = Counter(t.cls for t in got).most_common(1)[0][0]
            found[(c.check, c.env.label)] = [t for t in got if t.cls == top][-1]
    return replace(report, triage=found)


def outcome(report: Readiness) -> Outcome:
    """Exit 1 when a red cell no live acceptance covers remains; 0 otherwise."""
    gating = report.gating
    if gating:
        return Outcome(
            GATE_FAILED,
            "regressed",
            f"{len(gating)} cell(s) pass significantly less often than the basis",
            (Said("fail", f"not ready: {len(gating)} red cell(s) of job {report.job}"),),
        )
    accepted = len(report.red) - len(gating)  # shown beside their cells, still red
    note = f" ({accepted} red cell(s) accepted)" if accepted else ""
    return passed(
        "no cell passes significantly less often than the basis",
        (Said("pass", f"ready: no unaccepted red cell of job {report.job}{note}"),),
    )


def accepted(factory: sessionmaker[Session], report: Readiness) -> Readiness:
    """The acceptances beside the red cells they cover (live or not: an expired one is shown,
    and its cell gates again)."""
    from ..regression.acceptance import note
    from .accept import every

    found = every(factory)
    if not found or not report.red:
        return report
    now = queries.now()
    notes = {
        (c.check, c.env.label): got
        for c in report.red
        if (got := note(c.check, c.env.alias, c.env.arch, c.candidate.rate, found, now))
    }
    return replace(report, accepted=notes)


def gate(first: Outcome, report: Readiness) -> Outcome:
    """A qualification's outcome with readiness as a further gate: a red cell nobody accepted
    fails a qualification that otherwise passed (a worse outcome of its own stands)."""
    second = outcome(report)
    if second.ok:
        return replace(first, said=(*first.said, *second.said))
    if first.code not in (0,):
        return replace(first, said=(*first.said, *second.said))
    return replace(second, said=(*first.said, *second.said))


def for_report(
    factory: sessionmaker[Session],
    job: str,
    basis: str,
    window: str = "7d",
    alpha: float = rd.ALPHA,
) -> Readiness:
    """The readiness report a command prints: judged, with acceptances and triage."""
    return with_triage(factory, accepted(factory, evaluate(factory, job, basis, window, alpha)))


def summary(report: Readiness) -> dict[str, Any]:
    """What a qualification records of its readiness gate (qualify.json): the basis, the red
    cells, and the live acceptances that let red cells ship (``attest --qualify`` names them
    in the VSA)."""
    return {
        "readiness": {
            "basis": report.basis,
            "red": [f"{c.check} {c.env.label}" for c in report.red],
            "gating": [f"{c.check} {c.env.label}" for c in report.gating],
        },
        "accepted": [
            {"check": check, "env": env, **{k: a[k] for k in ("by", "reason", "until")}}
            for (check, env), a in sorted(report.accepted.items())
            if a.get("live")
        ],
    }
