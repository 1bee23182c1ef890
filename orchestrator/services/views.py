"""Turning stored rows into what the CLI prints (JSON objects, lines, matrices)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..matrix.model import Cell, Matrix, Observation
from ..matrix.model import final_counts as model_final_counts
from ..store.queries import provenance
from ..store.reads import Shown, node_hosts

if TYPE_CHECKING:  # a stored run is shown from Core rows: the ORM is the writers' (run's)
    from ..store.models import Result, Run
    from ..store.queue import RunSummary


def observations(runs: Sequence[Run], results: dict[str, Sequence[Result]]) -> list[Observation]:
    """A batch's runs read as ``matrix render`` reads the store (``matrix/evidence.EnvWalk``):
    one column per environment (alias on its host class, ``ALIAS · cpu only`` for a GPU
    image run ``--cpu-only``), each environment's runs newest first, each check's cell from
    the run whose verdict is final, rows in the job's suite order."""
    from ..matrix.evidence import Attempt, EnvWalk, RunFacts, SuitePlan, host_class
    from .evidence import assemble

    envs: dict[tuple[str, str], list[tuple[RunFacts, Run]]] = {}
    for run in sorted(runs, key=lambda r: (r.started, r.id), reverse=True):
        backend = str(run.image.backend)
        facts = RunFacts(
            run.id,
            run.image.alias,
            run.image.digest,
            backend,
            run.host.name,
            host_class(run.host.spec, backend, run.cpu_only),
            run.job,
            run.started,
            run.ended,
        )
        envs.setdefault(facts.env, []).append((facts, run))
    walks = {}
    for env, found in envs.items():
        walk = walks[env] = EnvWalk(env, {t.suite for _f, r in found for t in r.tasks})
        for facts, run in found:
            if walk.done:
                break
            suite_of = {t.id: t.suite for t in run.tasks}
            walk.feed(
                facts,
                [
                    SuitePlan(t.suite, bool((t.suite_spec or {}).get("checks")), t.state)
                    for t in run.tasks
                ],
                [
                    Attempt(
                        r.run_id,
                        suite_of.get(r.task_id) if r.task_id is not None else None,
                        r.check.check_id,
                        r.check.version,
                        r.check.feature,
                        r.check.kind,
                        r.attempt,
                        r.status,
                        r.message,
                        r.device,
                        r.library,
                    )
                    for r in results[run.id]
                ],
                run.state,
            )
    return list(assemble(walks, 0, False, 0).observations)


def cell_text(cell: Cell) -> str:
    """A cell of the run's matrix as ``matrix render`` writes it: its text with what its
    flags say (``services/evidence.marked``)."""
    from .evidence import marked

    return marked(cell.text, cell.verdict, cell.flags)


def matrix_json(matrix: Matrix, run_id: str) -> dict[str, Any]:
    """The cells one run speaks for in ``matrix``: its column and each check's verdict and
    text, in the matrix's row order (what the printed matrix shows for it)."""
    cells: list[dict[str, str]] = []
    column = None
    for row in matrix.rows:
        for col in matrix.columns:
            c = matrix.cells.get((row.key, col))
            if c is not None and run_id in c.runs:
                column = col
                cells.append({"check": row.key, "verdict": c.verdict, "text": cell_text(c)})
    return {"column": column, "cells": cells}


def run_json(shown: Shown) -> dict[str, Any]:
    """One stored run (store/reads.shown) as ``results show --json`` and ``run --json`` print it."""
    from .run_list import shown_state

    run, results = shown.run, shown.results
    image_meta = (run.meta or {}).get("image", {})
    return {
        "run": run.id,
        "batch": run.batch,
        "job": run.job,
        "state": shown_state(run.state, run.meta),
        "image": {
            "alias": run.alias,
            "reference": run.reference,
            "digest": run.digest,
            "backend": run.backend,
            # the tag's digest (an index for multi-platform images) and the manifest that ran
            "index_digest": image_meta.get("index_digest"),
            "platform_digest": image_meta.get("platform_digest"),
        },
        "host": run.name,
        "nodes": node_hosts(run.name, run.meta),  # every host of a multi-node run, its own first
        "executor": run.executor,
        "valorch_version": run.valorch_version,
        "spec_hash": run.spec_hash,
        "cpu_only": run.cpu_only,
        "started": run.started.isoformat(),
        "ended": run.ended.isoformat() if run.ended else None,
        "origin": run.origin,  # where a pushed or imported run came from; None: made here
        "provenance": provenance(run.origin),  # the same in words
        "counts": dict(model_final_counts((r.check_id, r.attempt, r.status) for r in results)),
        "timings": shown.timings,
        # library/device: what the evidence says ran; row_library: what the seed row is about
        # every column of store/reads.shown's attempts, the check id as "check" (printed sorted)
        "results": [
            {"check" if k == "check_id" else k: v for k, v in r._mapping.items()} for r in results
        ],
    }


def summary_line(s: RunSummary) -> str:
    counts = ", ".join(f"{n} {k}" for k, n in sorted(s.counts.items()))
    timing = " ".join(f"{suite}={t.get('total_s', 0):.1f}s" for suite, t in s.timings.items())
    extra = (
        f" [yellow]infrastructure: {'; '.join(s.infra_errors)[:300]}[/yellow]"
        if s.infra_errors
        else ""
    )
    return f"run {s.run_id[:8]} {s.image} on {s.host}: {counts or 'no results'} ({timing}){extra}"
