"""Scale of `valorch site build`: the 300,000-result store of bench_scale.py
(1,000 runs × 300 timed checks, 10 images, 2 hosts, 10 samples each) built into a
static site by the real command, timed as a whole process (Python start-up, reading
the store, change detection, every page and plot, the atomic swap). Goal ≤ 30 s.

    .venv/bin/python bench/bench_site.py [RUNS] [CHECKS] [--store PATH]

--store PATH keeps the generated store in PATH and reuses it when it is there (with
RUNS × CHECKS results), so that measurements before and after a change do not make it
each time; what is timed is the build alone either way.
"""

from __future__ import annotations

import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _store_option() -> Path | None:
    """--store PATH, taken out of sys.argv before bench_scale reads RUNS and CHECKS there."""
    if "--store" not in sys.argv:
        return None
    i = sys.argv.index("--store")
    if i + 1 >= len(sys.argv):
        sys.exit("--store needs a path (a SQLite file, made if it is not there)")
    path = Path(sys.argv[i + 1])
    del sys.argv[i : i + 2]
    return path


STORE = _store_option()
sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_scale import CHECKS, RUNS, generate, results_for
from sqlalchemy import func, select

from orchestrator.store import bulk
from orchestrator.store.db import open_engine, session_factory
from orchestrator.store.models import Host, Image, Result, Run

GOAL = 30.0
VALORCH = str(Path(sys.executable).with_name("valorch"))


def _fill(db: Path) -> None:
    """The store of bench_scale.py: RUNS runs × CHECKS timed checks (seeded: always the same)."""
    rng = random.Random(42)
    images, hosts, runs, checks, _ = generate(rng)
    factory = session_factory(open_engine(str(db)))
    with factory() as session:
        pks = bulk.check_pks(session, checks, checks)
        session.commit()
    rows = results_for(rng, runs, pks)
    with factory() as session:
        for model, data in ((Image, images), (Host, hosts), (Run, runs), (Result, rows)):
            bulk.insert_rows(session, model, data)
        session.commit()


def _results(db: Path) -> int:
    with session_factory(open_engine(str(db)))() as session:
        return int(session.scalar(select(func.count()).select_from(Result)) or 0)


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        db = STORE or Path(tmp) / "scale.sqlite"
        if not db.exists():
            _fill(db)
        results = _results(db)
        if results != RUNS * CHECKS:
            sys.exit(
                f"{db} holds {results:,} results, not {RUNS:,} × {CHECKS:,}: "
                "remove it (or pass another --store) to make it again"
            )
        out = Path(tmp) / "site"
        times, cpu = [], []
        for _ in range(2):  # the second build replaces the first (the atomic swap is part of it)
            t = time.perf_counter()
            r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            proc = subprocess.run(
                [VALORCH, "site", "build", "--out", str(out), "--db", str(db)],
                capture_output=True,
                text=True,
            )
            times.append(time.perf_counter() - t)
            r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu.append(r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime)
            if proc.returncode != 0:
                sys.exit(f"site build failed ({proc.returncode}): {proc.stderr[-2000:]}")
        files = sum(1 for p in out.rglob("*") if p.is_file())
        size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    best = min(times)
    print(f"## Site build: {RUNS} runs × {CHECKS} checks = {results:,} results\n")
    print("| step | measured | goal | ratio |")
    print("|---|---|---|---|")
    print(
        f"| `valorch site build` whole process ({files:,} files, {size / 1e6:.0f} MB) | {best:.1f} s "
        f"(builds: {', '.join(f'{t:.1f}' for t in times)} s) | ≤ {GOAL:g} s | {best / GOAL:.2f} |"
    )
    print(f"| the same, CPU time of the process and its page workers | {min(cpu):.1f} s | | |")
    print(f"\nload average during the run: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
