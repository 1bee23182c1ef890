"""The matrix's evidence from the store: every environment's runs walked newest first
(matrix/evidence.py says which result speaks for a cell), read in rounds so that a
long history costs a few statements, not one per run."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from ..matrix.document import Table, TCell, TRow
from ..matrix.evidence import (
    CPU_ONLY_CLASS,
    VERSION_ROWS,
    Attempt,
    EnvWalk,
    RunFacts,
    SuitePlan,
    column_labels,
    feeds,
    host_class,
    special,
)
from ..matrix.model import Observation, RunInfo
from ..render.waivers import said
from ..statuses import FAILING
from ..store import matrix_store

if TYPE_CHECKING:
    from sqlalchemy.engine import Connection
    from sqlalchemy.orm import Session

    from ..regression.waivers import Waivers

FIRST_ROUND, LAST_ROUND = 1, 64  # runs read per unsettled environment per round: 1, 2, 4, ... 64


@dataclass(frozen=True)
class Evidence:
    """What a matrix is built from: observations keyed by column, one RunInfo per column."""

    observations: tuple[Observation, ...]
    columns: tuple[RunInfo, ...]
    runs_read: int
    # ad-hoc / bisect / cpu-only runs feed it (asked for, or nothing else exists)
    special_used: bool
    special_left_out: int  # such runs that matched the other filters but were left out
    newest: datetime | None

    @property
    def empty(self) -> bool:
        return not self.columns


def _facts(run: matrix_store.RunLite, image: dict[str, Any], host: dict[str, Any]) -> RunFacts:
    return RunFacts(
        run.id,
        image["alias"],
        image["digest"],
        image["backend"],
        host["name"],
        host_class(host["spec"], image["backend"], run.cpu_only),
        run.job,
        run.started,
        run.ended,
        dict(image["components"] or {}),
    )


@dataclass
class _Env:
    groups: list[matrix_store.RunGroup]
    walk: EnvWalk
    offset: int = 0
    exhausted: bool = False


def gather(
    session: Connection | Session,
    selectors: Sequence[str] = (),
    since: datetime | None = None,
    job: str | None = None,
    include_special: bool = False,
    fallback_special: bool = True,
) -> Evidence:
    """Walk every environment of the selected runs. Without ``job`` only named jobs feed the
    matrix; ad-hoc, bisect and ``--cpu-only`` runs do with ``include_special`` or, when
    ``fallback_special``, when no named job has run at all (the header says which)."""
    groups = matrix_store.run_groups(session, selectors, since, job)
    images = matrix_store.images_of(session, [g.image_id for g in groups])
    hosts = matrix_store.hosts_of(session, [g.host_id for g in groups])

    def wanted(include: bool) -> list[matrix_store.RunGroup]:
        return [
            g
            for g in groups
            if feeds(
                g.job, images[g.image_id]["backend"], g.cpu_only, job=job, include_special=include
            )
        ]

    chosen = wanted(include_special)
    used_special = include_special or any(
        special(g.job, images[g.image_id]["backend"], g.cpu_only) for g in chosen
    )
    if not chosen and fallback_special and not include_special:
        chosen, used_special = wanted(True), True
    left_out = (
        0 if used_special else sum(g.runs for g in wanted(True)) - sum(g.runs for g in chosen)
    )
    envs: dict[tuple[str, str], list[matrix_store.RunGroup]] = {}
    for g in chosen:
        image = images[g.image_id]
        cls = host_class(hosts[g.host_id]["spec"], image["backend"], g.cpu_only)
        envs.setdefault((image["alias"], cls), []).append(g)
    state: dict[tuple[str, str], _Env] = {
        env: _Env(gs, EnvWalk(env, set().union(*(g.suites for g in gs))))
        for env, gs in envs.items()
    }
    size, read = FIRST_ROUND, 0
    while True:
        batch: dict[tuple[str, str], list[tuple[RunFacts, str]]] = {}
        for env, e in state.items():
            if e.walk.done or e.exhausted:
                continue
            found, rows = matrix_store.runs_of(session, e.groups, since, e.offset, size)
            e.offset += rows
            e.exhausted = rows < size
            if found:
                batch[env] = [
                    (_facts(r, images[r.image_id], hosts[r.host_id]), r.state) for r in found
                ]
        if not batch:
            break
        ids = [f.run_id for facts in batch.values() for f, _ in facts]
        plans: dict[str, list[SuitePlan]] = {}
        for p in matrix_store.plans_of(session, ids):
            plans.setdefault(p.run_id, []).append(SuitePlan(p.suite, p.filtered, p.state))
        attempts: dict[str, list[Attempt]] = {}
        for row in matrix_store.attempts_of(session, ids):  # columns in Attempt's order
            attempts.setdefault(row[0], []).append(Attempt(*row))
        for env, facts in batch.items():
            walk = state[env].walk
            for f, run_state in facts:
                if walk.done:
                    break
                walk.feed(f, plans.get(f.run_id, ()), attempts.get(f.run_id, ()), run_state)
        read += len(ids)
        size = min(size * 2, LAST_ROUND)
    walks = {env: e.walk for env, e in state.items()}
    runs = sorted({r for w in walks.values() for r in w.chosen_runs(VERSION_ROWS)})
    values = matrix_store.found_values(session, runs, VERSION_ROWS) if runs else {}
    for w in walks.values():
        w.values = values
    return assemble(walks, read, used_special, left_out)


def assemble(
    walks: dict[tuple[str, str], EnvWalk], runs_read: int, special_used: bool, special_left_out: int
) -> Evidence:
    """Observations and columns from walked environments (the site walks in memory and
    assembles the same way)."""
    labels = column_labels(walks)
    obs: list[Observation] = []
    columns: list[RunInfo] = []
    # columns in the order each environment first appeared (its oldest run read)
    for env, walk in sorted(
        walks.items(),
        key=lambda kv: (kv[1].newest.started if kv[1].newest else datetime.min, kv[0]),
    ):
        if walk.newest is None:
            continue
        label = labels[env]
        found = walk.observations(label)
        if not found:
            continue
        obs.extend(found)
        n = walk.newest
        columns.append(RunInfo(label, label, n.backend, env[1], dict(n.components), n.ended))
    return Evidence(
        tuple(obs),
        tuple(columns),
        runs_read,
        special_used,
        special_left_out,
        max((o.when for o in obs if o.when is not None), default=None),
    )


FLAG_TEXT = {"previous-digest": "previous digest", "newer-inconclusive": "newer run inconclusive"}


def stamp(table: Table, now: datetime, fresh_days: int) -> tuple[Table, int]:
    """Mark cells whose evidence is older than ``fresh_days`` as stale, and write every flag
    into the cell's text, so that no format (Markdown, RST, a published version) shows an old
    or borrowed verdict as if it were today's. Returns the table and the stale count."""
    cutoff = (now - timedelta(days=fresh_days)).strftime("%Y-%m-%d")
    stale = 0
    rows = []
    for row in table.rows:
        cells = []
        for c in row.cells:
            flags = tuple(c.flags)
            if c.when and c.when < cutoff and c.verdict not in ("", "missing", "skip", "n/a"):
                flags = (*flags, "stale")
                stale += 1
            if flags:  # not replace(): 10,000s of cells
                text = marked(c.text, c.verdict, flags, c.when)
                c = TCell(text, c.verdict, c.statuses, c.runs, c.note, c.when, flags)
            cells.append(c)
        rows.append(TRow(row.key, row.labels, tuple(cells)))
    return replace(table, rows=tuple(rows)), stale


def marked(text: str, verdict: str, flags: tuple[str, ...], when: str | None = None) -> str:
    """A cell's text with what its flags say written into it ("✅ (previous digest)", "❌ fail
    (cpu only)"), as every matrix shows it: ``matrix render``'s formats, the site and the
    matrix ``valorch run`` prints."""
    if not flags or verdict in ("", "missing", "skip", "n/a"):
        return text
    words = [FLAG_TEXT[f] for f in flags if f in FLAG_TEXT]
    if "cpu-only" in flags and verdict != "cpu-only":
        words.append("cpu only")
    if "stale" in flags:
        words.append(f"stale: {when}")
    return f"{text} ({', '.join(words)})" if words else text


def excuse(
    observations: Sequence[Observation], columns: Sequence[RunInfo], issues: Waivers | None
) -> list[Observation]:
    """The observations with every failure a live known issue excuses shown as ``xfail`` (⚑
    known issue, its reason as the message): the same failures qualify, diff and run --junit
    excuse, excused on the matrix and the site too (docs/statuses.md)."""
    if issues is None:
        return list(observations)
    info = {c.run_id: c for c in columns}
    out = []
    for o in observations:
        run = info.get(o.column)
        # the matrix's host class (``amd gfx942 + nvidia sm_90``) as waivers read one
        host = "cpu" if run is None or run.host == CPU_ONLY_CLASS else run.host
        host = host.replace(" + ", "+").replace(" ", ":")
        hit = (
            issues.excuse(run.image, run.backend, o.check, o.status, host)
            if run is not None and o.status in FAILING
            else None
        )
        if hit is not None:
            o = replace(o, status="xfail", message=said(hit))
        out.append(o)
    return out
