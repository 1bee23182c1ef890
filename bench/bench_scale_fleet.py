"""Fleet scale: ~3 years of a 50-image fleet's nightlies, 10,000,000 results
with 10 timing samples each, on SQLite and on PostgreSQL.

Builds the data set (generated here, never committed) through the store's bulk ingest
(orchestrator/store/bulk.py: executemany on SQLite, COPY on PostgreSQL), then times
what people do with years of history, against the goals set for a fleet's shared store:

  ingest    results/s over the whole build (generation not counted)    goal >= 200,000/s (SQLite)
  matrix    latest matrix of the job "nightly" → Markdown              goal < 1 s
  diff      the latest two runs of an image → report → Markdown        goal < 0.5 s

and prints the query plans (EXPLAIN QUERY PLAN / EXPLAIN) of every statement each one
ran, to show the indexes at work. In every row a ratio below 1 meets the goal: measured
/ goal for times, goal / measured for the ingest rate.

    .venv/bin/python bench/bench_scale_fleet.py [--results N] [--db sqlite|postgresql|both]
        [--dir DIR] [--keep] [--pg-url URL]

PostgreSQL: --pg-url, else a throwaway server (tests/pgserver.py: Debian's postgresql,
fsync on, shared_buffers 512MB) in --dir. The data set is removed at the end unless --keep.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import shutil
import statistics
import sys
import tempfile
import time
import uuid
from datetime import datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sqlalchemy import event, text

from orchestrator.render.diff import diff_md
from orchestrator.services import evidence
from orchestrator.services.diff import report_for
from orchestrator.services.matrix import MatrixQuery, build_document, render_document
from orchestrator.services.session import sessions
from orchestrator.store import bulk, checkpoint, queries
from orchestrator.store.db import open_engine, session_factory, upgrade
from orchestrator.store.models import Host, Image, Result, Run

IMAGES, HOSTS, CHECKS, SAMPLES = 50, 12, 200, 10
RELEASE_EVERY, RELEASE_IMAGES = 7, 5  # a weekly "release" job on 5 images: the matrix names its job
GOALS = {"ingest": 200_000, "matrix": 1.0, "diff": 0.5}
T0 = datetime(2023, 1, 1, 1, 0)


def layout(target: int) -> int:
    """Nights so that nightlies plus weekly release runs make about `target` results."""
    per_night = IMAGES * CHECKS + RELEASE_IMAGES * CHECKS / RELEASE_EVERY
    return max(2, round(target / per_night))


class Fleet:
    """The generated fleet: images, hosts, checks, then runs and results night by night."""

    def __init__(self, nights: int, seed: int = 14) -> None:
        self.rng = random.Random(seed)
        self.nights = nights
        self.images = [
            {
                "id": i + 1,
                "alias": f"fleet_img_{i:02d}",
                "reference": f"fleet/img:{i}",
                "digest": f"sha256:{i:064x}",
                "backend": ("rocm", "cuda", "cpu")[i % 3],
                "family": "fleet",
                "components": {"pytorch": f"2.{i % 8}.0"},
            }
            for i in range(IMAGES)
        ]
        self.hosts = [
            {"id": h + 1, "name": f"runner-{h:02d}", "fingerprint": f"{h:064x}", "spec": {}}
            for h in range(HOSTS)
        ]
        self.checks = {
            (f"kernels.fleet.op{c:03d}", 1): {
                "feature": f"op {c}",
                "kind": "kernel",
                "library": "fleet",
                "unit": "s",
            }
            for c in range(CHECKS)
        }
        base = {k: self.rng.uniform(1e-4, 1e-2) for k in self.checks}
        # a pool of sample vectors per check: realistic noise without 100M random() calls
        self.pool = {
            k: [[b * self.rng.uniform(0.99, 1.01) for _ in range(SAMPLES)] for _ in range(16)]
            for k, b in base.items()
        }
        self.slow = {k: [[s * 1.2 for s in v] for v in vs] for k, vs in list(self.pool.items())[:5]}

    def night(self, n: int, pks: dict) -> tuple[list[dict], list[dict]]:
        """The runs and results of night n (the last night plants 5 slowdowns and 1 failure on image 0)."""
        rng, last = self.rng, n == self.nights - 1
        runs, rows = [], []
        jobs = [("nightly", i) for i in range(IMAGES)]
        if n % RELEASE_EVERY == RELEASE_EVERY - 1:
            jobs += [("release", i) for i in range(RELEASE_IMAGES)]
        for k, (job, i) in enumerate(jobs):
            started = T0 + timedelta(days=n, minutes=k)
            run_id = str(uuid.UUID(int=rng.getrandbits(128), version=4))
            runs.append(
                {
                    "id": run_id,
                    "batch": f"{job}-{n:04d}",
                    "job": job,
                    "image_id": i + 1,
                    "host_id": i % HOSTS + 1,
                    "executor": "docker",
                    "valorch_version": "bench",
                    "spec_hash": "0" * 16,
                    "cpu_only": False,
                    "started": started,
                    "ended": started + timedelta(minutes=20),
                    "state": "done",
                    "meta": {},
                }
            )
            planted = last and i == 0 and job == "nightly"
            for c, (key, pk) in enumerate(pks.items()):
                pool = self.slow.get(key) if planted and key in self.slow else self.pool[key]
                status = (
                    "fail" if planted and c == 7 else ("pass" if rng.random() > 0.005 else "fail")
                )
                rows.append(
                    {
                        "run_id": run_id,
                        "task_id": None,
                        "check_pk": pk,
                        "attempt": 1,
                        "status": status,
                        "duration_s": 0.01,
                        "message": "",
                        "log": "",
                        "metrics": {},
                        "samples": pool[rng.randrange(16)],
                    }
                )
        return runs, rows


def _ingest(fleet: Fleet, factory, pks: dict) -> tuple[float, float, int, list]:
    """Night by night, one transaction per ~200,000 results; (wall s, CPU s, results, per-chunk rates)."""
    spent, cpu, total, chunks = 0.0, 0.0, 0, []
    batch_runs, batch_rows = [], []
    for n in range(fleet.nights):
        runs, rows = fleet.night(n, pks)
        batch_runs += runs
        batch_rows += rows
        if len(batch_rows) >= 200_000 or n == fleet.nights - 1:
            with Clock() as c, factory() as s:
                bulk.insert_rows(s, Run, batch_runs)
                bulk.insert_rows(s, Result, batch_rows)
                s.commit()
            dt = c.wall
            spent, cpu, total = spent + dt, cpu + c.cpu, total + len(batch_rows)
            chunks.append((total, len(batch_rows) / dt))
            print(
                f"  {total:>11,} results  {len(batch_rows) / dt:>9,.0f}/s  (load {os.getloadavg()[0]:.1f})",
                file=sys.stderr,
                flush=True,
            )
            batch_runs, batch_rows = [], []
    return spent, cpu, total, chunks


def build(db: str, fleet: Fleet, out: list[str]) -> dict:
    upgrade(db)
    engine = open_engine(db)
    factory = session_factory(engine)
    with factory() as s:
        pks = queries.check_pks(s, fleet.checks, fleet.checks)
        bulk.insert_rows(s, Image, fleet.images)
        bulk.insert_rows(s, Host, fleet.hosts)
        s.commit()
    pks = dict(sorted(pks.items()))
    # the store's bulk ingest as `results push` into a SQLite file runs it: WAL checkpoints
    # on a second thread (store/checkpoint.py)
    with checkpoint.background_checkpoints(engine) as worker:
        spent, cpu, total, chunks = _ingest(fleet, factory, pks)
    copied = f"; checkpoints on the second thread copied {worker.frames:,} pages" if worker else ""
    t = time.perf_counter()
    with factory() as s:
        if s.get_bind().dialect.name == "postgresql":
            s.commit()
            s.connection().connection.driver_connection.autocommit = True
            s.execute(text("VACUUM ANALYZE"))  # what autovacuum does after a bulk load
    maintenance = time.perf_counter() - t
    first = statistics.mean(r for _, r in chunks[:5])
    lastr = statistics.mean(r for _, r in chunks[-5:])
    out.append(
        f"ingest: {total:,} results in {spent:.1f} s wall ({cpu:.1f} CPU s) = {total / spent:,.0f} results/s; "
        f"first 1M at {first:,.0f}/s, last 1M at {lastr:,.0f}/s (wall); after-load maintenance "
        f"{maintenance:.1f} s{copied}"
    )
    return {"results": total, "seconds": spent, "rate": total / spent, "cpu_rate": total / cpu}


class Capture:
    """Statements an engine runs, to EXPLAIN them afterwards."""

    def __init__(self, engine) -> None:
        self.engine, self.seen = engine, []
        event.listen(engine, "before_cursor_execute", self._hook)

    def _hook(self, conn, cursor, statement, parameters, context, executemany):
        if statement.lstrip().upper().startswith("SELECT") and not executemany:
            self.seen.append((statement, parameters))

    def explain(self) -> list[str]:
        event.remove(self.engine, "before_cursor_execute", self._hook)
        lines, done = [], set()
        with self.engine.connect() as conn:
            pg = conn.dialect.name == "postgresql"
            for statement, params in self.seen:
                if (
                    statement in done
                    or "alembic_version" in statement
                    or "sqlite_master" in statement
                ):
                    continue
                done.add(statement)
                sql = ("EXPLAIN " if pg else "EXPLAIN QUERY PLAN ") + statement
                plan = [
                    row[0] if pg else row[-1]
                    for row in conn.exec_driver_sql(sql, params).fetchall()
                ]
                lines.append("    " + _short(" ".join(statement.split()), 150))
                lines += ["      " + _short(line, 150) for line in _collapse(plan)]
        return lines


def _short(line: str, width: int) -> str:
    return line if len(line) <= width else line[: width - 2] + " …"


def _collapse(plan: list[str]) -> list[str]:
    """Runs of plan lines that differ only in literals (IN lists, BitmapOr arms) as one line."""

    def shape(line: str) -> str:
        return re.sub(r"'[^']*'|\b\d+(\.\d+)?\b", "?", line)

    out: list[tuple[str, str, int]] = []
    for line in plan:
        if out and shape(line) == out[-1][1]:
            out[-1] = (out[-1][0], out[-1][1], out[-1][2] + 1)
        else:
            out.append((line, shape(line), 1))
    return [line if n == 1 else f"{line}   (× {n}, literals differ)" for line, _, n in out]


SERVER_PID: int | None = (
    None  # the throwaway PostgreSQL server's postmaster, when this bench started it
)


def server_cpu() -> float:
    """CPU seconds of the throwaway server: the postmaster and every process under it."""
    if SERVER_PID is None:
        return 0.0
    tick, total = os.sysconf("SC_CLK_TCK"), 0.0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        pid, ppid = int(stat.parent.name), int(fields[1])
        if SERVER_PID in (pid, ppid):
            total += (int(fields[11]) + int(fields[12])) / tick
    return total


class Clock:
    """Wall seconds, and CPU seconds of this process plus the throwaway server's: on a
    shared, loaded machine the CPU figure is what the work costs, the wall figure what
    it took there."""

    def __enter__(self) -> Clock:
        self.w, self.c = time.perf_counter(), time.process_time() + server_cpu()
        return self

    def __exit__(self, *exc: object) -> None:
        self.wall = time.perf_counter() - self.w
        self.cpu = time.process_time() + server_cpu() - self.c


def timed(fn, engine, reps: int = 3) -> dict:
    """first (wall), warm (median wall of the next runs), cpu (median CPU of those), plans."""
    cap = Capture(engine)
    with Clock() as first:
        fn()
    plans = cap.explain()
    warm = []
    for _ in range(reps):
        with Clock() as c:
            fn()
        warm.append(c)
    return {
        "first": first.wall,
        "warm": statistics.median(c.wall for c in warm) if warm else first.wall,
        "cpu": statistics.median(c.cpu for c in warm) if warm else first.cpu,
        "plans": plans,
    }


def queries_on(db: str, out: list[str]) -> dict:
    engine = open_engine(db)
    factory = session_factory(engine)
    found: dict = {}

    def matrix() -> None:
        # the `valorch matrix render --job nightly` path, opening the database included; its
        # engine is not ours, so the plans come from running its statements here (same SQL)
        doc = build_document(sessions(db), db, lambda: None, MatrixQuery(job="nightly"))
        found["matrix"] = render_document(doc, "md")

    def matrix_sql() -> None:
        with factory() as s:
            evidence.gather(
                s, (), None, "nightly"
            )  # each check's newest final verdict per image and host class

    def diff() -> None:
        with factory() as s:
            base, head = queries.last_runs_of_image(s, "fleet_img_00", 2, ["release"])
            report = report_for(s, base.id, head.id, 0.05, None)
            found["diff"] = (report, diff_md(report))

    res = {"matrix": timed(matrix, engine)}
    res["matrix"]["plans"] = timed(matrix_sql, engine, reps=0)["plans"]
    res["diff"] = timed(diff, engine)
    report, _md = found["diff"]
    assert report.counts.get("slower") == 5 and report.counts.get("regressed", 0) >= 1, (
        report.counts
    )
    assert found["matrix"].count("\n") > CHECKS and "fleet_img_49" in found["matrix"]
    engine.dispose()
    return res


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument(
        "--results", type=int, default=int(os.environ.get("VALORCH_BENCH_RESULTS", 10_000_000))
    )
    ap.add_argument("--db", choices=("sqlite", "postgresql", "both"), default="both")
    ap.add_argument(
        "--dir",
        type=Path,
        default=None,
        help="where the data set goes [default: a temporary directory]",
    )
    ap.add_argument(
        "--keep", action="store_true", help="keep the data set (and skip building it when present)"
    )
    ap.add_argument(
        "--pg-url",
        default=None,
        help="an empty PostgreSQL database to use instead of a throwaway server",
    )
    args = ap.parse_args()
    nights = layout(args.results)
    if args.keep:
        work = args.dir or ROOT / "results" / "bench"
        work.mkdir(parents=True, exist_ok=True)
    else:
        work = Path(tempfile.mkdtemp(prefix="valorch-fleet-", dir=args.dir))
    server = None
    kinds = ("sqlite", "postgresql") if args.db == "both" else (args.db,)
    report: dict[str, dict] = {}
    try:
        for kind in kinds:
            out: list[str] = []
            if kind == "sqlite":
                db = str(work / f"fleet-{args.results}.sqlite")
            elif args.pg_url:
                db = args.pg_url
            else:
                sys.path.insert(0, str(ROOT / "tests"))
                import pgserver

                # no parallel workers: two cores, and their CPU would escape the clock's count
                server = pgserver.start(
                    fsync=True,
                    settings={
                        "shared_buffers": "512MB",
                        "max_wal_size": "4GB",
                        "max_parallel_workers_per_gather": "0",
                    },
                )
                global SERVER_PID
                SERVER_PID = server.proc.pid
                db = server.create_database("fleet")
            print(
                f"# {kind}: building {args.results:,} results ({nights} nights × {IMAGES} images × {CHECKS} "
                f"checks + weekly release runs) in {db}",
                file=sys.stderr,
                flush=True,
            )
            reuse = args.keep and kind == "sqlite" and Path(db).exists()
            built = None if reuse else build(db, Fleet(nights), out)
            if kind == "sqlite":
                out.append(f"SQLite file: {os.path.getsize(db) / 1e9:.2f} GB")
            report[kind] = {"built": built, "queries": queries_on(db, out), "notes": out}
    finally:
        if server is not None:
            server.stop()
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    print(
        f"## Fleet scale: ~{args.results:,} results, {SAMPLES} samples each, {IMAGES} images, "
        f"{nights} nights\n"
    )
    print("| step | database | wall: first / warm | CPU (warm) | goal | ratio: wall warm / CPU |")
    print("|---|---|---|---|---|---|")
    for kind, r in report.items():
        if r["built"]:
            b = r["built"]
            print(
                f"| ingest {b['results']:,} results (generation not counted) | {kind} | {b['rate']:,.0f} results/s | "
                f"{b['cpu_rate']:,.0f} results/CPU-s | ≥ {GOALS['ingest']:,}/s | "
                f"{GOALS['ingest'] / b['rate']:.2f} / {GOALS['ingest'] / b['cpu_rate']:.2f} |"
            )
        for step, what, goal in (
            ("matrix", "latest matrix of job nightly → Markdown", GOALS["matrix"]),
            ("diff", "diff of the latest two runs of an image → Markdown", GOALS["diff"]),
        ):
            q = r["queries"][step]
            print(
                f"| {what} | {kind} | {q['first']:.3f} s / {q['warm']:.3f} s | {q['cpu']:.3f} s | < {goal:g} s | "
                f"{q['warm'] / goal:.2f} / {q['cpu'] / goal:.2f} |"
            )
    for kind, r in report.items():
        print(f"\n{kind}: " + "; ".join(r["notes"]))
        for step in ("matrix", "diff"):
            print(f"\nquery plans, {step} on {kind}:\n```")
            print("\n".join(r["queries"][step]["plans"]))
            print("```")
    print(f"\nload average at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
