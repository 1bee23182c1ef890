"""Qualify a release: check the inputs, run the job, diff its runs against the baseline."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy.orm import Session, sessionmaker

from ..catalog.core import Catalog
from ..regression import known_issues as ki
from ..regression import rule as engine
from ..store import queries
from . import views
from .candidate import check_baseline_for
from .diff import report_for, resolve, runs_side
from .run import execute_job


@dataclass(frozen=True)
class Qualification:
    lines: tuple[str, ...]
    report: engine.Report
    infra_errors: bool
    tampered: tuple[str, ...] = ()  # checks whose results were tampered with or cut at the output cap


def qualify(spec: Any, cat: Catalog, factory: sessionmaker[Session], baseline: str, known_issues: Path | None,
            threshold: float, reporter: Any = None, on_warning: Any = None, **where: Any) -> Qualification:
    if known_issues:
        loaded = ki.load(known_issues)  # bad input fails before an hour of runs, not after
        for warning in loaded.warnings if on_warning else ():
            on_warning(warning)
    with factory() as session:
        base = resolve(session, baseline)  # unknown baseline: exit 2 now
    check_baseline_for(spec, cat, base.envs, baseline)  # one candidate against a many-image baseline: exit 2
    summaries = execute_job(spec, cat, factory, reporter=reporter, **where)
    with factory() as session:
        runs = [queries.get_run(session, s.run_id) for s in summaries]
        batch = runs[0].batch if runs else "none"
        head = runs_side(session, f"{spec.name} {batch[:8]}", "qualify", runs)
        report = report_for(session, base, head, threshold, known_issues)
    return Qualification(tuple(views.summary_line(s) for s in summaries), report,
                         any(s.infra_errors for s in summaries),
                         tuple(sorted({c for s in summaries for c in s.protocol_errors})))
