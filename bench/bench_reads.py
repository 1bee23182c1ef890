"""Start-up of every read-only command, whole process, against `python -c pass`.

Each round runs the floor and then every command once (interleaved, so that a loaded or
drifting machine's changes land in no ratio); the table gives the median wall of each over
BENCH_REPS rounds (default 15, after one round that warms the page cache), its ratio to the
floor, and whether it meets the goal: <= 0.25 s and <= 15x `python -c pass`. The store is a
small one made here (one `valorch run --image host`).

BENCH_TREES=before=/path/a,after=/path/b measures the same commands from two checkouts in the
same rounds (each put first on PYTHONPATH), for a before/after table; by default, the
checkout this script sits in. BENCH_COMMANDS="results list,matrix render" measures only
those. Prints figures; not a timed test.
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VALORCH = str(Path(sys.executable).with_name("valorch"))
REPS = int(os.environ.get("BENCH_REPS", "15"))
GOAL_S, GOAL_RATIO = 0.25, 15.0

#: every command that only reads (the store, the catalog, the job specs, the hosts file)
COMMANDS = (
    ("version",),
    ("--help",),
    ("images", "list"),
    ("images", "show", "host"),
    ("suites", "list"),
    ("suites", "show", "smoke"),
    ("jobs", "list"),
    ("jobs", "show", "nightly"),
    ("jobs", "runners", "nightly"),
    ("hosts", "list"),
    ("results", "list"),
    ("results", "show", "RUN"),
    ("matrix", "render"),
    ("matrix", "versions"),
    ("baseline", "list"),
    ("accept", "list"),
    ("inventory", "list"),
    ("db", "status"),
)


def trees() -> dict[str, Path]:
    given = os.environ.get("BENCH_TREES")
    if not given:
        return {"": ROOT}
    return {name: Path(path) for name, path in (x.split("=", 1) for x in given.split(","))}


def wall(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """The process's wall and CPU (user + system) seconds: CPU is the steadier on a loaded
    machine, where wall includes the time others held the cores."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, env=env)
    took = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(argv)} failed ({done.returncode}): {done.stderr[-800:]}")
    return took, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "VALORCH_DB": f"{tmp}/small.sqlite", "COLUMNS": "120"}
        made = subprocess.run(
            [VALORCH, "run", "--image", "host", "--check", "env.*", "--no-matrix", "--json"],
            env=env,
            capture_output=True,
            text=True,
        )
        run_id = json.loads(made.stdout)[0]["run"]
        envs = {name: {**env, "PYTHONPATH": str(path)} for name, path in trees().items()}
        argvs = {
            (name, " ".join(c)): [
                VALORCH,
                *(run_id if a == "RUN" else a for a in c),
            ]
            for c in COMMANDS
            for name in envs
            if " ".join(c) in os.environ.get("BENCH_COMMANDS", " ".join(c)).split(",")
        }
        load = os.getloadavg()
        floor: list[tuple[float, float]] = []
        times: dict[tuple[str, str], list[tuple[float, float]]] = {k: [] for k in argvs}
        for i in range(REPS + 1):
            took = wall([sys.executable, "-c", "pass"], env)
            if i:
                floor.append(took)
            for (name, shown), argv in argvs.items():
                took = wall(argv, envs[name])
                if i:
                    times[(name, shown)].append(took)
        report(floor, times, load)


def report(
    floor: list[tuple[float, float]],
    times: dict[tuple[str, str], list[tuple[float, float]]],
    load: tuple[float, ...],
) -> None:
    base, base_cpu = (statistics.median(x[k] for x in floor) for k in (0, 1))
    names = list(dict.fromkeys(name for name, _ in times))
    print(
        f"floor: python -c pass {base:.3f} s wall, {base_cpu:.3f} s CPU (median of {REPS} "
        f"interleaved rounds); load {load[0]:.1f} at the start, {os.getloadavg()[0]:.1f} at "
        f"the end, {os.cpu_count()} cores\n"
    )
    cols = " | ".join(f"{n or 'wall'} (s) | x pass | CPU x pass" for n in names)
    print(f"| command | {cols} | goal met |")
    print("|---|" + "---|---|---|" * len(names) + "---|")
    for shown in dict.fromkeys(s for _, s in times):
        cells, last = [], 0.0
        for n in names:
            last, cpu = (statistics.median(x[k] for x in times[(n, shown)]) for k in (0, 1))
            cells.append(f"{last:.3f} | {last / base:.1f} | {cpu / base_cpu:.1f}")
        met = "yes" if last <= GOAL_S or last / base <= GOAL_RATIO else "no"
        print(f"| `valorch {shown}` | {' | '.join(cells)} | {met} |")


if __name__ == "__main__":
    main()
