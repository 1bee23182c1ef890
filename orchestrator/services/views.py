"""Turning stored rows into what the CLI prints (JSON objects, lines, matrices)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from ..matrix.model import Observation, build
from ..matrix.model import final_counts as model_final_counts
from ..render.markdown import matrix_md
from ..store import queries
from ..store.models import Result, Run
from ..store.queue import RunSummary, node_hosts


def observation(row: Result, column: str) -> Observation:
    """One stored result (an ORM ``Result``) as a matrix observation under ``column``: the one
    place where observations are built from rows. The library is the result's evidence (what
    ran), never the row's label."""
    return Observation(
        column=column,
        check=row.check.check_id,
        feature=row.check.feature,
        kind=row.check.kind,
        library=row.library,
        status=row.status,
        attempt=row.attempt,
        run_id=row.run_id,
        message=row.message,
    )


def observations(runs: Sequence[Run], results: dict[str, Sequence[Result]]) -> list[Observation]:
    """The results of each run, one column per image alias."""
    return [observation(r, run.image.alias) for run in runs for r in results[run.id]]


def matrix_markdown(runs: Sequence[Run], results: dict[str, Sequence[Result]]) -> str:
    return matrix_md(build(observations(runs, results)))


def final_counts(results: Sequence[Result]) -> Counter[str]:
    return model_final_counts((r.check.check_id, r.attempt, r.status) for r in results)


def shown_state(run: Run) -> str:
    """The run's state, or ``abandoned`` for a ``running`` run whose owner died
    (services/run_list.ABANDONED)."""
    if run.state == "running" and isinstance(run.meta, dict):
        from ..executors import owner
        from .run_list import ABANDONED

        mine = run.meta.get("_owner")
        if isinstance(mine, str) and owner.orphaned(mine):
            return ABANDONED
    return str(run.state)


def run_json(run: Run, results: Sequence[Result]) -> dict[str, Any]:
    return {
        "run": run.id,
        "batch": run.batch,
        "job": run.job,
        "state": shown_state(run),
        "image": {
            "alias": run.image.alias,
            "reference": run.image.reference,
            "digest": run.image.digest,
            "backend": run.image.backend,
            # the tag's digest (an index for multi-platform images) and the manifest that ran
            "index_digest": (run.meta or {}).get("image", {}).get("index_digest"),
            "platform_digest": (run.meta or {}).get("image", {}).get("platform_digest"),
        },
        "host": run.host.name,
        "nodes": node_hosts(run),  # every host of a multi-node run, its own first
        "executor": run.executor,
        "valorch_version": run.valorch_version,
        "spec_hash": run.spec_hash,
        "cpu_only": run.cpu_only,
        "started": run.started.isoformat(),
        "ended": run.ended.isoformat() if run.ended else None,
        "origin": run.origin,  # where a pushed or imported run came from; None: made here
        "provenance": queries.provenance(run.origin),  # the same in words
        "counts": dict(final_counts(results)),
        "timings": {t.suite: t.timings for t in run.tasks},
        # library/device: what the evidence says ran; row_library: what the seed row is about
        "results": [
            {
                "check": r.check.check_id,
                "version": r.check.version,
                "feature": r.check.feature,
                "library": r.library,
                "device": r.device,
                "row_library": r.check.library,
                "kind": r.check.kind,
                "attempt": r.attempt,
                "status": r.status,
                "duration_s": r.duration_s,
                "message": r.message,
                "metrics": r.metrics,
                "samples": r.samples,
            }
            for r in results
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
