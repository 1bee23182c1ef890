"""valorch diff BASE HEAD: what changed between two result sets, with a noise-aware timing rule.

A side is a run id (or unique prefix), a batch id, a published matrix version, a
baseline name, or ``latest`` / ``latest:ALIAS``.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Any, Sequence

import typer
from rich.table import Table
from sqlalchemy.orm import Session

from .. import diff as engine
from .. import known_issues as ki
from ..errors import InputError, ValorchError
from ..notify import message, send
from ..services import notify as notify_service
from ..notify import targets as notify_targets
from ..regression import noise
from ..render.diff import RENDERERS, SECTIONS, _timing_text, header
from ..store import bulk, noise_queries, queries
from .common import DbOption, err, load_catalog, out, sessions, write_output

FORMATS = ("term", "md", "html", "json", "junit")
NotifyOption = typer.Option(None, "--notify", help="Post the outcome: slack=URL or github=OWNER/REPO (token in "
                            "GITHUB_TOKEN, commit in GITHUB_SHA); repeatable.")


class NoResults(InputError):
    """A side of the diff has no results (for notifications: a failure, never a success)."""


def head_images(session: Session, run_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Head environment → what a repro command needs to name its image."""
    try:
        local = {i.alias for i in load_catalog(None).images if i.local}
    except ValorchError:
        local = set()
    out = {}
    for rid in run_ids:
        run = queries.get_run(session, rid)
        if run is not None:
            out[run.image.alias] = {"alias": run.image.alias, "reference": run.image.reference,
                                    "digest": run.image.digest, "local": run.image.alias in local,
                                    "host": run.executor == "host", "cpu_only": run.cpu_only}
    return out


def notify_outcome(targets: Sequence[Any], outcome: Any) -> bool:
    """Post to the targets; True when every one was reached."""
    return not send.send(targets, outcome, say=lambda line: err.print(line, markup=False, highlight=False))


def _threshold_of(metrics: dict[str, Any] | None) -> float | None:
    value = (metrics or {}).get("threshold")
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0 else None


def runs_side(session: Session, label: str, kind: str, runs: Sequence[Any], images: Sequence[str] = ()) -> engine.Side:
    runs = [r for r in runs if not images or r.image.alias in images]
    ids = [r.id for r in runs]
    obs = tuple(engine.Obs(env=row["alias"], check=row["check_id"], status=row["status"], attempt=row["attempt"],
                           version=row["version"], samples=tuple(float(s) for s in row["samples"] or ()),
                           bigger_is_better=bool(row["bigger_is_better"]), threshold=_threshold_of(row["metrics"]),
                           backend=row["backend"], message=row["message"] or "",
                           noisy=bool(row["samples"]) and noise.noisy(row["metrics"]))
                for row in bulk.result_rows(session, ids))
    digests = tuple(dict.fromkeys((r.image.alias, r.image.digest) for r in runs if r.image.digest))
    return engine.Side(label, kind, obs, tuple(ids), digests, tuple(bulk.host_names(session, ids)))


def matrix_side(label: str, kind: str, mv: Any, images: Sequence[str] = ()) -> engine.Side:
    """A published matrix: statuses only (no samples, no check versions)."""
    obs = []
    for cell in mv.cells:
        if images and cell.column not in images:
            continue
        for i, status in enumerate(cell.statuses or [cell.verdict]):
            obs.append(engine.Obs(env=cell.column, check=cell.row, status=str(status), attempt=i + 1, version=None,
                                  backend=str((cell.meta or {}).get("backend", ""))))
    digests = tuple((k, str(v)) for k, v in sorted(((mv.meta or {}).get("digests") or {}).items()))
    return engine.Side(label, kind, tuple(obs), (), digests, ())


def resolve(session: Session, spec: str, images: Sequence[str] = ()) -> engine.Side:
    """A side from its name, or an InputError (exit 2) that says what names exist."""
    if spec == "latest" or spec.startswith("latest:"):
        alias = spec.partition(":")[2]
        wanted = [alias] if alias else list(images)
        runs = queries.latest_runs(session, wanted)
        if not runs:
            raise InputError(f"'{spec}': no finished runs" + (f" of {', '.join(wanted)}" if wanted else ""),
                             "run something first: valorch run --image ALIAS")
        return runs_side(session, spec, "latest", runs, images)
    base = bulk.baseline(session, spec)
    if base is not None:
        if base.run_id:
            return runs_side(session, spec, "baseline", [queries.get_run(session, base.run_id)], images)
        mv = bulk.matrix_version(session, base.matrix_version or "")
        if mv is None:
            raise InputError(f"baseline '{spec}' names matrix version '{base.matrix_version}', which is not stored",
                             "publish it again, or point the baseline elsewhere: valorch baseline set NAME RUN")
        return matrix_side(spec, "baseline", mv, images)
    mv = bulk.matrix_version(session, spec)
    if mv is not None:
        return matrix_side(spec, "matrix", mv, images)
    run = queries.get_run(session, spec)
    if run is not None:
        return runs_side(session, run.id[:8], "run", [run], images)
    runs = bulk.runs_of_batch(session, spec) if len(spec) >= 4 else []
    if runs:
        return runs_side(session, spec[:8], "batch", runs, images)
    raise InputError(f"'{spec}' is not a run, batch, matrix version or baseline in the results database",
                     "list them with `valorch results list` and `valorch baseline list`; or use latest[:ALIAS]")


def report_for(session: Session, base: str | engine.Side, head: str | engine.Side, threshold: float,
               known_issues: Path | None, images: Sequence[str] = ()) -> engine.Report:
    if not 0 < threshold < 100:
        raise InputError(f"--threshold {threshold}: must be a fraction above 0, e.g. 0.05 for 5 %")
    issues = ki.load(known_issues) if known_issues else None
    bside = base if isinstance(base, engine.Side) else resolve(session, base, images)
    hside = head if isinstance(head, engine.Side) else resolve(session, head, images)
    if not bside.observations or not hside.observations:
        empty = bside if not bside.observations else hside
        raise NoResults(f"'{empty.label}' has no results" + (f" for {', '.join(images)}" if images else ""),
                        "check --image, or pick a side that has results")
    calibration = noise_queries.run_noise(session, hside.runs) if hside.runs else {}
    return engine.compare(bside, hside, threshold, issues.match if issues else None,
                          issues.expired() if issues else (), date.today(), calibration)


def print_term(report: engine.Report) -> None:
    h = header(report)
    verdict = "[bold red]REGRESSED[/bold red]" if report.regressed else "[bold green]no regression[/bold green]"
    out.print(f"diff {report.base.kind} [bold]{report.base.label}[/bold] → {report.head.kind} "
              f"[bold]{report.head.label}[/bold]: {verdict}")
    out.print(f"  environments: {', '.join(report.base.envs)} → {', '.join(report.head.envs)}; "
              f"hosts: {', '.join(report.base.hosts) or '—'} → {', '.join(report.head.hosts) or '—'}; "
              f"threshold {report.threshold * 100:g} %")
    out.print("  counts: " + (", ".join(f"{k} {v}" for k, v in h["counts"].items()) or "nothing compared"))
    if h["noisy_host"]:
        out.print(f"  [yellow]noisy host[/yellow]: {h['noisy_host']} timed check(s) ran on a busy host; "
                  "their timing changes are shown (~), not counted")
    for issue in report.expired:
        out.print(f"  [yellow]known issue {issue.check} expired on {issue.expires}[/yellow]: {issue.reason}")
    for title, kinds in SECTIONS:
        rows = [c for c in report.changes if c.kind in kinds]
        if not rows:
            continue
        table = Table(title=f"{title} ({len(rows)})", title_justify="left")
        for col in ("", "environment", "check", "base", "head", "detail"):
            table.add_column(col)
        for c in sorted(rows, key=lambda c: -(c.timing.ratio if c.timing else 1)):
            table.add_row(c.mark, c.env, c.check, c.base or "—", c.head or "—", _timing_text(c) or c.note,
                          style="red" if c.kind in engine.COUNTED else None)
        out.print(table)
    for env, backend, ratio, n in report.geomean:
        out.print(f"  geomean {env} ({backend or '—'}): {ratio:.3f} over {n} timed checks")


def diff(base: str = typer.Argument(..., help="run id/prefix, batch, matrix version, baseline, latest[:ALIAS]"),
         head: str = typer.Argument(..., help="the same kinds of names as BASE"),
         fmt: str = typer.Option("term", "--format", "-f", help="term, md, html, json or junit."),
         out_path: Path = typer.Option(None, "--out", "-o", help="Write here instead of stdout."),
         threshold: float = typer.Option(engine.DEFAULT_THRESHOLD, help="Timing ratio threshold (0.05 = 5 %)."),
         known_issues: Path = typer.Option(None, "--known-issues", help="Known-issues YAML (failures expected)."),
         image: list[str] = typer.Option(None, "--image", help="Only these image aliases (repeatable)."),
         notify: list[str] = NotifyOption, db: str = DbOption) -> None:
    """What changed between BASE and HEAD; exit 1 when anything regressed."""
    if fmt not in FORMATS:
        raise InputError(f"unknown --format '{fmt}'", f"use one of {', '.join(FORMATS)}")
    targets = notify_targets.parse(notify or ())
    title = f"valorch diff {base} → {head}"
    with sessions(db)() as session:
        try:
            report = report_for(session, base, head, threshold, known_issues, image or ())
        except NoResults as exc:
            if targets:
                notify_outcome(targets, message.Outcome(title, 0, summary=exc.message))
            raise
        images = head_images(session, report.head.runs) if targets else {}
    reached = notify_outcome(targets, notify_service.from_report(report, title, images)) if targets else True
    if fmt == "term" and out_path is None:
        print_term(report)
    else:
        write_output(RENDERERS["md" if fmt == "term" else fmt](report), out_path)
    if report.regressed:
        err.print(f"[red]regressed[/red]: {sum(1 for c in report.changes if c.kind in engine.COUNTED)} change(s)")
        raise typer.Exit(1)
    if not reached:
        raise typer.Exit(3)
