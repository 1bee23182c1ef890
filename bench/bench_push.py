"""Push throughput: a runner's local SQLite store into PostgreSQL with
`valorch results push` (orchestrator/services/push.py): whole runs, one transaction
each, results by COPY.

A runner store of RUNS runs × CHECKS checks (10 timing samples per result) is
generated, then pushed to a throwaway server (tests/pgserver.py: Debian's
postgresql, fsync on, so that every run's commit is durable as on a real server).
Prints runs/s and results/s for the first push, and the time of a second push that
finds everything there (what a nightly runner pays when nothing is new).

    .venv/bin/python bench/bench_push.py [RUNS] [CHECKS] [--pg-url URL]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
import uuid
from datetime import datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from orchestrator.services.push import push
from orchestrator.spec import HostSpec, ImageSpec, SuiteRef
from orchestrator.store import bulk, queries
from orchestrator.store.db import open_engine, session_factory, upgrade
from orchestrator.store.models import Result


def runner_store(path: Path, runs: int, checks: int) -> int:
    with session_factory(open_engine(str(path)))() as s:
        pks = queries.check_pks(s, [(f"kernels.push.op{c:03d}", 1) for c in range(checks)])
        rows = []
        for i in range(runs):
            image = ImageSpec(alias=f"img{i % 5}", reference=f"push/img:{i % 5}", backend="cpu")
            run = queries.start_run(
                s,
                batch=f"b{i}",
                job="nightly",
                image=image,
                digest=None,
                host=HostSpec(name="runner"),
                executor="docker",
                spec_hash="x",
                cpu_only=False,
                suites=[SuiteRef(name="kernels")],
                run_id=str(uuid.uuid4()),
            )
            run.state, run.started = "done", datetime(2026, 1, 1) + timedelta(hours=i)
            run.ended = run.started + timedelta(minutes=10)
            rows += [
                {
                    "run_id": run.id,
                    "task_id": run.tasks[0].id,
                    "check_pk": pk,
                    "attempt": 1,
                    "status": "pass",
                    "duration_s": 0.01,
                    "message": "",
                    "log": "",
                    "metrics": {"device": "cpu"},
                    "samples": [1e-3 * (1 + k / 100) for k in range(10)],
                }
                for pk in pks.values()
            ]
        bulk.insert_rows(s, Result, rows)
        s.commit()
        return len(rows)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("runs", nargs="?", type=int, default=500)
    ap.add_argument("checks", nargs="?", type=int, default=200)
    ap.add_argument(
        "--pg-url", default=None, help="an empty PostgreSQL database [default: a throwaway server]"
    )
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="valorch-push-"))
    server = None
    try:
        local = work / "runner.sqlite"
        n_results = runner_store(local, args.runs, args.checks)
        if args.pg_url:
            url = args.pg_url
        else:
            sys.path.insert(0, str(ROOT / "tests"))
            import pgserver

            server = pgserver.start(fsync=True)
            url = server.create_database("shared")
        upgrade(url)
        first = push(str(local), url, origin="bench-runner")
        t = time.perf_counter()
        second = push(str(local), url, origin="bench-runner")
        again = time.perf_counter() - t
        assert first.pushed == args.runs and first.results == n_results and second.pushed == 0, (
            first,
            second,
        )
    finally:
        if server is not None:
            server.stop()
        shutil.rmtree(work, ignore_errors=True)
    print(
        f"## Push: {args.runs} runs × {args.checks} checks = {n_results:,} results, SQLite → PostgreSQL\n"
    )
    print("| push | runs | results | seconds | runs/s | results/s |")
    print("|---|---|---|---|---|---|")
    print(
        f"| first (everything new) | {first.pushed} | {first.results:,} | {first.seconds:.2f} | "
        f"{first.pushed / first.seconds:.1f} | {first.results / first.seconds:,.0f} |"
    )
    print(f"| again (nothing new) | 0 | 0 | {again:.2f} | — | — |")
    print(
        f"\none transaction per run, fsync on; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"
    )


if __name__ == "__main__":
    main()
