"""Start-up of the CLI and the cost of a smoke run against their floors.

1. Commands that run no container and open no engine, as whole processes (median of
   REPS interleaved rounds, each round runs every command once, so that the machine's drift
   lands in none of the ratios): goal <= 0.25 s each on a quiet machine; the floor is
   `python -c pass`, and `python -c "import sqlalchemy"` is the reference a loaded machine's
   figures are read against (the store's commands cannot start faster than it).
2. `valorch run --image cpu_debian12_py3.11_pytorch_2.13` (smoke) against the same work
   done by hand: `docker run --rm --network none IMAGE python3 -c "import torch; ..."`;
   goal <= 1.10x.
Prints ratios; not a timed test. Run on an idle machine (`make bench`).
BENCH_SMOKE=0 measures the start-up only (part 1), BENCH_STARTUP=0 the smoke pair only (part 2);
BENCH_SMOKE_REPS sets the smoke pair's rounds (default 15).
"""

from __future__ import annotations

import compileall
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VALORCH = str(Path(sys.executable).with_name("valorch"))
REPS = int(os.environ.get("BENCH_REPS", "7"))
# the smoke pair's rounds: each holds a framework import in a container, whose time varies
# by a third from one run to the next on a machine whose page cache is under reclaim (nine
# rounds gave 1.09-1.85x in one hour), as recorded in
# docs/benchmarks.md, "The smoke run: the probe from a volume"
SMOKE_REPS = int(os.environ.get("BENCH_SMOKE_REPS", "15"))
GOAL_START = 0.25
GOAL_RATIO = 1.10
IMAGE, REFERENCE = "cpu_debian12_py3.11_pytorch_2.13", "valorch/test:pip-torch"
BY_HAND = "import torch; a=torch.randn(256,256); (a@a).sum()"


CPU: list[
    float
] = []  # CPU seconds (user + sys) of each measured process: steadier than wall on a busy host


def wall(argv: list[str], cwd: Path = ROOT, env: dict[str, str] | None = None) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, env=env)
    took = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    CPU.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    if done.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(argv)} failed ({done.returncode}): {done.stderr[-800:]}")
    return took


def rounds(
    commands: dict[str, list[str]],
    env: dict[str, str],
    envs: dict[str, dict[str, str]] | None = None,
) -> dict[str, tuple[float, float]]:
    """Each command once per round, REPS rounds (after one to warm the page cache): the
    median wall and CPU seconds of each. ``envs`` gives a command an environment of its own."""
    runs: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
    for i in range(REPS + 1):
        for name, argv in commands.items():
            CPU.clear()
            took = wall(argv, env=(envs or {}).get(name, env))
            if i:
                runs[name].append((took, CPU[0]))
    return {
        name: (statistics.median(w for w, _ in got), statistics.median(c for _, c in got))
        for name, got in runs.items()
    }


def main() -> None:
    # measured as installed: a wheel's bytecode is compiled by pip; an editable install's only
    # by its first run, and never where PYTHONDONTWRITEBYTECODE is set (make's install does it)
    compileall.compile_dir(ROOT / "orchestrator", quiet=1)
    with tempfile.TemporaryDirectory() as tmp:
        db = f"{tmp}/small.sqlite"
        env = {**os.environ, "VALORCH_DB": db}
        wall(
            [VALORCH, "run", "--image", "host", "--check", "env.*", "--no-matrix"], env=env
        )  # a small database
        if os.environ.get("BENCH_STARTUP", "1") != "0":
            startup(env)
        if os.environ.get("BENCH_SMOKE", "1") != "0":
            smoke_pair(env)


def startup(env: dict[str, str]) -> None:
    """Part 1: the commands that run no container, against ``python -c pass``."""
    load = os.getloadavg()[0]
    run_id = json.loads(
        subprocess.run(
            [VALORCH, "results", "list", "--json"], env=env, capture_output=True, text=True
        ).stdout
    )[0]["run"]
    floors = {
        "python -c pass": [sys.executable, "-c", "pass"],
        'python -c "import sqlalchemy"': [sys.executable, "-c", "import sqlalchemy"],
    }
    commands = {
        " ".join(args): [VALORCH, *args]
        for args in (
            ["version"],
            ["--help"],
            ["images", "list"],
            ["suites", "list"],
            ["jobs", "list"],
            ["results", "list"],
            ["matrix", "render"],
        )
    }
    commands["results show RUN"] = [VALORCH, "results", "show", run_id]
    measured = rounds({**floors, **commands}, env)
    (floor, floor_cpu), (ref, _) = (
        measured["python -c pass"],
        measured['python -c "import sqlalchemy"'],
    )
    print(
        f"floor: python -c pass {floor:.3f} s wall, {floor_cpu:.3f} s CPU; import sqlalchemy "
        f"{ref:.3f} s wall (median of {REPS} interleaved rounds, load {load:.1f})\n"
    )
    print("| command | wall (s) | CPU (s) | wall / goal | wall / pass | wall / import sqlalchemy |")
    print("|---|---|---|---|---|---|")
    for name in commands:
        t, c = measured[name]
        print(
            f"| `valorch {name}` | {t:.3f} | {c:.3f} | {t / GOAL_START:.2f} | {t / floor:.1f} "
            f"| {t / ref:.2f} |"
        )
    print(f"\n(load at the end: {os.getloadavg()[0]:.1f})")


def smoke_pair(env: dict[str, str]) -> None:
    """Part 2: the smoke run against the same work done by hand, interleaved."""
    if (
        not shutil.which("docker")
        or subprocess.run(["docker", "image", "inspect", REFERENCE], capture_output=True).returncode
        != 0
    ):
        print(
            f"\n(no engine or no {REFERENCE}: skipped the smoke ratio; make test-images builds it)"
        )
        return
    # interleaved, one of each per round: this VM's speed drifts within minutes, and two
    # blocks measured one after the other would put that drift into the ratio
    hand_argv = [
        "docker",
        "run",
        "--rm",
        "--network",
        "none",
        REFERENCE,
        "python3",
        "-c",
        BY_HAND,
    ]
    smoke_argv = [VALORCH, "run", "--image", IMAGE, "--no-matrix", "--no-gate"]
    wall(hand_argv), wall(smoke_argv, env=env)  # warm both
    load = os.getloadavg()[0]
    CPU.clear()
    pairs = [(wall(hand_argv), wall(smoke_argv, env=env)) for _ in range(SMOKE_REPS)]
    smoke_cpu = statistics.median(CPU[1::2])  # the valorch process's own CPU seconds
    by_hand, smoke = (
        statistics.median(h for h, _ in pairs),
        statistics.median(v for _, v in pairs),
    )
    per_round = statistics.median(v / h for h, v in pairs)
    print(
        f"\n| smoke run | wall (s) |\n|---|---|\n| `docker run --rm --network none {REFERENCE} python3 -c "
        f'"{BY_HAND}"` | {by_hand:.2f} |\n| `valorch run --image {IMAGE}` (smoke) | {smoke:.2f} |'
    )
    print(
        f"\nratio valorch / by hand: {smoke / by_hand:.2f}x of the medians, {per_round:.2f}x the median of "
        f"{SMOKE_REPS} interleaved rounds (goal <= {GOAL_RATIO}x); valorch's CPU {smoke_cpu:.3f} s; "
        f"load {load:.1f} -> {os.getloadavg()[0]:.1f}"
    )


if __name__ == "__main__":
    main()
