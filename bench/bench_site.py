"""Scale of `valorch site build`: the 300,000-result store of bench_scale.py
(1,000 runs × 300 timed checks, 10 images, 2 hosts, 10 samples each) built into a
static site by the real command, timed as a whole process (Python start-up, reading
the store, change detection, every page and plot, the atomic swap). Goal ≤ 30 s.

Then one run (300 results, of image 0) is added, as a nightly runner would, and the site
is built again in place (the pages that run does not change are kept), then into a new
directory (a full build): the two must hold the same bytes. The build in
place is timed once more with nothing changed: its floor. Goal of the build in place
≤ 1 s. The store is copied first, so a --store kept between runs is not changed.

    .venv/bin/python bench/bench_site.py [RUNS] [CHECKS] [--store PATH]

--store PATH keeps the generated store in PATH and reuses it when it is there (with
RUNS × CHECKS results), so that measurements before and after a change do not make it
each time; what is timed is the build alone either way.
"""

from __future__ import annotations

import filecmp
import os
import random
import resource
import sqlite3
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
from bench_scale import CHECKS, IMAGES, RUNS, generate, results_for
from sqlalchemy import func, select

from orchestrator.store import bulk, queries
from orchestrator.store.db import open_engine, session_factory
from orchestrator.store.models import Host, Image, Result, Run

GOAL = 30.0
GOAL_IN_PLACE = 1.0
VALORCH = str(Path(sys.executable).with_name("valorch"))


def _fill(db: Path) -> None:
    """The store of bench_scale.py: RUNS runs × CHECKS timed checks (seeded: always the same)."""
    rng = random.Random(42)
    images, hosts, runs, checks, _ = generate(rng)
    factory = session_factory(open_engine(str(db)))
    with factory() as session:
        pks = queries.check_pks(session, checks, checks)
        session.commit()
    rows = results_for(rng, runs, pks)
    with factory() as session:
        for model, data in ((Image, images), (Host, hosts), (Run, runs), (Result, rows)):
            bulk.insert_rows(session, model, data)
        session.commit()


def _add_run(db: Path) -> None:
    """One more run of image 0 on host a, a minute after the last, with every check."""
    rng = random.Random(7)
    _images, _hosts, runs, checks, _ = generate(random.Random(42))
    run = dict(runs[-IMAGES], id="00000000-0000-4000-8000-000000000001")
    run.update(
        batch="batch-next",
        started=runs[-1]["started"] + (runs[-1]["started"] - runs[-2]["started"]),
    )
    run["ended"] = run["started"]
    factory = session_factory(open_engine(str(db)))
    with factory() as session:
        pks = queries.check_pks(session, checks, checks)
        bulk.insert_rows(session, Run, [run])
        bulk.insert_rows(session, Result, results_for(rng, [run], pks))
        session.commit()


def _timed(args: list[str]) -> tuple[float, float, str]:
    """Wall and CPU seconds of one `valorch site build`, and what it said."""
    t = time.perf_counter()
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run([VALORCH, "site", "build", *args], capture_output=True, text=True)
    wall = time.perf_counter() - t
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        sys.exit(f"site build failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return wall, r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime, proc.stderr.strip()


def _same(a: Path, b: Path) -> bool:
    files = sorted(str(p.relative_to(a)) for p in a.rglob("*") if p.is_file())
    if files != sorted(str(p.relative_to(b)) for p in b.rglob("*") if p.is_file()):
        return False
    _match, mismatch, errors = filecmp.cmpfiles(a, b, files, shallow=False)
    return not mismatch and not errors


def _results(db: Path) -> int:
    with session_factory(open_engine(str(db)))() as session:
        return int(session.scalar(select(func.count()).select_from(Result)) or 0)


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        kept = STORE or Path(tmp) / "scale.sqlite"
        if not kept.exists():
            _fill(kept)
        results = _results(kept)
        if results != RUNS * CHECKS:
            sys.exit(
                f"{kept} holds {results:,} results, not {RUNS:,} × {CHECKS:,}: "
                "remove it (or pass another --store) to make it again"
            )
        db = Path(tmp) / "nightly.sqlite"  # a copy: one run is added to it
        with sqlite3.connect(kept) as src, sqlite3.connect(db) as dst:
            src.backup(dst)
        out = Path(tmp) / "site"
        times, cpu = [], []
        for _ in range(2):  # the second build replaces the first (the atomic swap is part of it)
            wall, used, _said = _timed(["--out", str(out), "--db", str(db), "--full"])
            times.append(wall)
            cpu.append(used)
        files = sum(1 for p in out.rglob("*") if p.is_file())
        size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
        _add_run(db)
        env_epoch = {"SOURCE_DATE_EPOCH": str(int(time.time()) // 60 * 60)}
        os.environ.update(env_epoch)  # the in-place and the full build say the same time
        in_place, in_place_cpu, said = _timed(["--out", str(out), "--db", str(db)])
        # the floor of a build in place: nothing changed, every run, check and image page kept
        again, again_cpu, _said = _timed(["--out", str(out), "--db", str(db)])
        fresh = Path(tmp) / "fresh"
        full_after, full_after_cpu, _said = _timed(["--out", str(fresh), "--db", str(db)])
        same = _same(out, fresh)
    best = min(times)
    print(f"## Site build: {RUNS} runs × {CHECKS} checks = {results:,} results\n")
    print("| step | measured | goal | ratio |")
    print("|---|---|---|---|")
    print(
        f"| `valorch site build` whole process ({files:,} files, {size / 1e6:.0f} MB) | {best:.1f} s "
        f"(builds: {', '.join(f'{t:.1f}' for t in times)} s) | ≤ {GOAL:g} s | {best / GOAL:.2f} |"
    )
    print(f"| the same, CPU time of the process and its page workers | {min(cpu):.1f} s | | |")
    print(
        f"| one run added, the site built again in place | {in_place:.1f} s "
        f"(CPU {in_place_cpu:.1f} s) | ≤ {GOAL_IN_PLACE:g} s | {in_place / GOAL_IN_PLACE:.2f} |"
    )
    print(
        f"| the same again, nothing changed (the floor of a build in place) | {again:.1f} s "
        f"(CPU {again_cpu:.1f} s) | | |"
    )
    print(
        f"| the same store, a full build into a new directory | {full_after:.1f} s (CPU {full_after_cpu:.1f} s) | | |"
    )
    print(f"\nthe build in place said: {said}")
    print(f"byte for byte the full build: {'yes' if same else 'NO'}")
    print(f"\nload average during the run: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    if not same:
        sys.exit("the site built in place differs from the full build")


if __name__ == "__main__":
    main()
