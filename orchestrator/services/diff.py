"""Resolve the two sides of a diff (runs, batches, matrix versions, baselines, latest)
and build the regression report."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from datetime import date
from statistics import median
from typing import TYPE_CHECKING, Any

from sqlalchemy.orm import Session, sessionmaker

from .. import words
from ..errors import InputError
from ..hostclass import host_class
from ..matrix.evidence import SPECIAL_JOBS
from ..regression import changepoints, gate, noise, pairing
from ..regression import rule as engine
from ..regression.waivers import Waivers
from ..spec import STATUSES, tampered
from ..store import bulk, noise_queries, queries
from . import accept
from .outcome import GATE_FAILED, INCONCLUSIVE, Outcome, Said, passed

if TYPE_CHECKING:
    from ..store.bulk import Published
    from ..store.models import Run

MIN_AA_RUNS = 4  # fewer quiet earlier runs than this: a check's run-to-run noise is not known
MAX_POOLED = 100  # latest:ALIAS:N


class NoResultsError(InputError):
    """A side of the diff has no results (for notifications: a failure, never a success)."""


def _threshold_of(metrics: dict[str, Any] | None) -> float | None:
    value = (metrics or {}).get("threshold")
    return (
        float(value)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0
        else None
    )


def runs_side(
    session: Session, label: str, kind: str, runs: Sequence[Run], images: Sequence[str] = ()
) -> engine.Side:
    runs = [r for r in runs if not images or r.image.alias in images]
    ids = [r.id for r in runs]
    hosts = {r.id: host_class(r.host.spec if r.host else {}) for r in runs}
    obs = tuple(
        engine.Obs(
            env=row["alias"],
            check=row["check_id"],
            status=row["status"],
            attempt=row["attempt"],
            version=row["version"],
            samples=tuple(float(s) for s in row["samples"] or ()),
            bigger_is_better=bool(row["bigger_is_better"]),
            threshold=_threshold_of(row["metrics"]),
            backend=row["backend"],
            message=row["message"] or "",
            noisy=bool(row["samples"]) and noise.noisy(row["metrics"]),
            run=row["run_id"],
            tampered=row["status"] == "error" and tampered(row["metrics"]),
            definition=row["definition"],
            host=hosts.get(row["run_id"], ""),
        )
        for row in bulk.result_rows(session, ids)
    )
    digests = tuple(dict.fromkeys((r.image.alias, r.image.digest) for r in runs if r.image.digest))
    return engine.Side(label, kind, obs, tuple(ids), digests, tuple(bulk.host_names(session, ids)))


def matrix_side(
    label: str,
    kind: str,
    mv: Published,
    images: Sequence[str] = (),
    session: Session | None = None,
) -> engine.Side:
    """A published matrix: statuses only (no samples). With ``session``, each check's
    version and definition as the stored runs its cell names recorded them (one of each, or
    none), so a check whose definition changed since is not comparable, as against runs."""
    cells = [c for c in mv.cells if not images or c.column in images]
    recorded: dict[tuple[str, str], set[tuple[Any, Any]]] = {}
    if session is not None:
        wanted = {(r, c.row) for c in cells for r in c.runs or ()}
        for row in bulk.result_rows(session, sorted({r for r, _c in wanted})):
            if (row["run_id"], row["check_id"]) in wanted:
                recorded.setdefault((row["run_id"], row["check_id"]), set()).add(
                    (row["version"], row["definition"])
                )
    obs = []
    for cell in cells:
        kinds = {k for r in cell.runs or () for k in recorded.get((r, cell.row), ())}
        version, definition = kinds.pop() if len(kinds) == 1 else (None, None)
        for i, status in enumerate(s for s in (cell.statuses or [cell.verdict]) if s in STATUSES):
            # a "missing" (or empty) cell measured nothing: it is no baseline check the head could lose
            obs.append(
                engine.Obs(
                    env=cell.column,
                    check=cell.row,
                    status=str(status),
                    attempt=i + 1,
                    version=version,
                    backend=str((cell.meta or {}).get("backend", "")),
                    definition=definition,
                )
            )
    digests = tuple((k, str(v)) for k, v in sorted(((mv.meta or {}).get("digests") or {}).items()))
    return engine.Side(label, kind, tuple(obs), (), digests, ())


def _latest(session: Session, spec: str, images: Sequence[str], include_adhoc: bool) -> engine.Side:
    """``latest``, ``latest:ALIAS``, ``latest:ALIAS:N``: the newest runs of named jobs (a
    bisect's or an ad-hoc run is no one's "latest" unless asked: --include-adhoc; ad-hoc
    runs count when no named job ran the image)."""
    alias, _, count = spec.partition(":")[2].partition(":")
    if count and (not alias or not count.isdigit() or not 1 <= int(count) <= MAX_POOLED):
        raise InputError(
            f"'{spec}': write latest:ALIAS:N with N from 1 to {MAX_POOLED}",
            "e.g. latest:cpu_debian12_py3.11_pytorch_2.13:5 pools the 5 newest runs",
        )
    wanted = [alias] if alias else list(images)
    # the jobs left out, tried in turn: ad-hoc and bisect runs, then (when only ad-hoc runs
    # exist) bisect runs; with include_adhoc none
    adhoc_too = tuple(j for j in SPECIAL_JOBS if j != "adhoc")
    for skip in ((),) if include_adhoc else (SPECIAL_JOBS, adhoc_too):
        if count:  # latest:ALIAS:N, the N newest runs of one image, pooled (noise shrinks by √N)
            newest = queries.last_runs_of_image(session, alias, 1, skip_jobs=skip)
            if not newest:
                continue
            # only runs of the newest run's digest on its host: one side is one environment
            runs = queries.runs_like(session, newest[0], int(count), skip_jobs=skip)
            if len(runs) < int(count):
                raise InputError(
                    f"'{spec}': {alias} has {words.count(len(runs), 'finished run')} of its newest digest on "
                    f"{newest[0].host.name}, not {count}",
                    f"run it again: valorch run --image {alias} --repeat {int(count) - len(runs)}",
                )
            return runs_side(session, spec, "latest", runs, images)
        runs = queries.latest_runs(session, wanted, skip_jobs=skip)
        if runs:
            return runs_side(session, spec, "latest", runs, images)
    raise InputError(
        f"'{spec}': no finished runs"
        + (f" of {', '.join(wanted)}" if wanted else "")
        + ("" if include_adhoc else " (bisect runs are left out: --include-adhoc counts them)"),
        "run something first: valorch run --image ALIAS",
    )


def resolve(
    session: Session, spec: str, images: Sequence[str] = (), include_adhoc: bool = False
) -> engine.Side:
    """A side from its name, or an InputError (exit 2) that says what names exist."""
    if spec == "latest" or spec.startswith("latest:"):
        return _latest(session, spec, images, include_adhoc)
    base = bulk.baseline(session, spec)
    if base is not None:
        if base.run_id:
            run = queries.get_run(session, base.run_id)
            if run is None:
                raise InputError(
                    f"baseline '{spec}' names run '{base.run_id}', which is not stored",
                    "point the baseline at a stored run: valorch baseline set NAME RUN",
                )
            return runs_side(session, spec, "baseline", [run], images)
        mv = bulk.matrix_version(session, base.matrix_version or "")
        if mv is None:
            raise InputError(
                f"baseline '{spec}' names matrix version '{base.matrix_version}', which is not stored",
                "publish it again, or point the baseline elsewhere: valorch baseline set NAME RUN",
            )
        return matrix_side(spec, "baseline", mv, images, session)
    mv = bulk.matrix_version(session, spec)
    if mv is not None:
        return matrix_side(spec, "matrix", mv, images, session)
    run = queries.get_run(session, spec)
    if run is not None:
        return runs_side(session, run.id[:8], "run", [run], images)
    runs = bulk.runs_of_batch(session, spec) if len(spec) >= 4 else []
    if runs:
        return runs_side(session, spec[:8], "batch", runs, images)
    raise InputError(
        f"'{spec}' is not a run, batch, matrix version or baseline in the results database",
        "list them with `valorch results list` and `valorch baseline list`; or use latest[:ALIAS]",
    )


def report_for(
    session: Session,
    base: str | engine.Side,
    head: str | engine.Side,
    threshold: float,
    issues: Waivers | None,
    images: Sequence[str] = (),
    pair: Sequence[str] = (),
    on_pair: Callable[[str, str], None] | None = None,
) -> engine.Report:
    """The report from ``base`` to ``head`` (names, or sides already read); ``issues``: the
    known issues, parsed once by the caller, that excuse the head's failures."""
    if not 0 < threshold < 100:
        raise InputError(f"--threshold {threshold}: must be a fraction above 0, e.g. 0.05 for 5 %")
    bside = base if isinstance(base, engine.Side) else resolve(session, base, images)
    hside = head if isinstance(head, engine.Side) else resolve(session, head, images)
    # --pair: an image meets its successor
    bside, hside, paired = pairing.apply(bside, hside, pairing.parse(pair))
    if on_pair is not None:
        for b, h in paired.items():
            on_pair(b, h)
    if not bside.observations or not hside.observations:
        empty = bside if not bside.observations else hside
        raise NoResultsError(
            f"'{empty.label}' has no results" + (f" for {', '.join(images)}" if images else ""),
            "check --image, or pick a side that has results",
        )
    issues = accept.joined(session, issues)
    # (image alias, check) → run-to-run noise (log medians, robust) measured on the A/A
    # history of the head's runs: the same digest on the same host, quiet runs only
    sigma = {}
    for key, items in (noise_queries.aa_history(session, hside.runs) if hside.runs else {}).items():
        meds = [median(s) for s, m in items if len(s) >= 3 and not noise.noisy(m)]
        meds = [m for m in meds if m > 0]
        if len(meds) >= MIN_AA_RUNS:
            sigma[key] = changepoints.robust_sigma([math.log(m) for m in meds])
    return engine.compare(
        bside,
        hside,
        threshold,
        issues.match if issues else None,
        issues.expired() if issues else (),
        date.today(),
        sigma,
    )


def compare(  # noqa: PLR0913 - one argument per option of valorch diff
    factory: sessionmaker[Session],
    base: str,
    head: str,
    threshold: float,
    issues: Waivers | None,
    images: Sequence[str] = (),
    pair: Sequence[str] = (),
    on_pair: Callable[[str, str], None] | None = None,
    include_adhoc: bool = False,
) -> engine.Report:
    """The report between two named sides, in one session (``pair``: regression/pairing.py
    rules; ``issues``: the known issues, parsed once by the caller; ``include_adhoc``: latest
    counts ad-hoc and bisect runs too)."""
    pairing.parse(pair)  # bad rules are exit 2 before the database is read
    with factory() as session:
        bside = resolve(session, base, images, include_adhoc)
        hside = resolve(session, head, images, include_adhoc)
        return report_for(session, bside, hside, threshold, issues, images, pair, on_pair)


def judge(
    report: engine.Report,
    gate_coverage: bool | None = False,
    allow_known_failures: bool = False,
    notifying: bool = False,
) -> gate.Verdict:
    """diff's gate (exit 1): every unexcused failure of the head, still failing ones unless
    ``allow_known_failures``, every timing regression, and lost coverage with ``gate_coverage``
    (None: when ``notifying``, so a posted green result never hides lost coverage)."""
    chosen = notifying if gate_coverage is None else gate_coverage
    return gate.decide(
        report,
        gate_coverage=chosen,
        allow_known_failures=allow_known_failures,
        coverage_flag="--no-gate-coverage" if gate_coverage is False else "no --gate-coverage",
        subject="diff",
    )


def ending(verdict: gate.Verdict, notified: bool = True) -> Outcome:
    """How ``valorch diff`` ends: 1 when the gate fails (saying why), 3 when a notification did
    not reach its target (the news is lost: never a success), else 0."""
    if verdict.exit_code == GATE_FAILED:
        why = verdict.why()
        return Outcome(GATE_FAILED, "regressed", why, (Said("error", f"gate failed: {why}"),))
    if not notified:
        return Outcome(INCONCLUSIVE, "notification lost", "a notification did not reach its target")
    return passed(verdict.why())
