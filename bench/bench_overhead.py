"""Suite overhead: valorch against the floor, and against a container per check.

For each CPU suite in one image (default: the PyTorch 2.13 test image):
  floor     = one bare container start (`docker run --rm IMAGE true`, median)
              + one framework import (measured inside the worker)
              + the sum of the check bodies (timed inside the probe)
  valorch   = the docker executor's wall time for the suite (create → remove)
  cli       = the whole `valorch run` process (adds interpreter start, DB, matrix)
  per-check = one container per check (as container-structure-test does), each
              paying its own start and import: `valorch run --check ID` per check
              (measured on one suite, the smallest that has a framework).
Prints a Markdown table; the ratio valorch/floor is the figure to watch (goal <= 1.10).
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VALORCH = str(Path(sys.executable).with_name("valorch"))
ALIAS = sys.argv[1] if len(sys.argv) > 1 else "cpu_debian12_py3.11_pytorch_2.13"
SUITES = ["smoke", "kernels", "features", "compile", "profiler"]
PER_CHECK_SUITE = "smoke"


def run(args: list[str], db: str) -> tuple[float, dict]:
    t0 = time.perf_counter()
    out = subprocess.run(
        [VALORCH, "run", *args, "--json", "--no-gate", "--no-matrix", "--db", db],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    wall = time.perf_counter() - t0
    if not out.stdout.strip():
        raise SystemExit(f"valorch run {' '.join(args)} printed nothing: {out.stderr[-2000:]}")
    return wall, json.loads(out.stdout)[0]


def main() -> None:
    ref = json.loads(
        subprocess.run(
            [VALORCH, "images", "show", ALIAS, "--json"], capture_output=True, text=True, cwd=ROOT
        ).stdout
    )["reference"]
    bare = []
    for _ in range(5):
        t0 = time.perf_counter()
        subprocess.run(
            ["docker", "run", "--rm", "--network", "none", ref, "true"],
            check=True,
            capture_output=True,
        )
        bare.append(time.perf_counter() - t0)
    start = statistics.median(bare)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        db = f"{tmp}/b.sqlite"
        for suite in SUITES:
            cli_wall, result = run(["--image", ALIAS, "--suite", suite], db)
            t = result["timings"][suite]
            floor = start + t["import_s"] + t["checks_s"]
            rows.append(
                (
                    suite,
                    len({r["check"] for r in result["results"]}),
                    floor,
                    t["total_s"],
                    cli_wall,
                    t["import_s"],
                    t["checks_s"],
                    int(t["workers"]),
                )
            )
        checks = [
            r["check"]
            for r in run(["--image", ALIAS, "--suite", PER_CHECK_SUITE], db)[1]["results"]
        ]
        per_check = 0.0
        for cid in checks:
            _wall, res = run(["--image", ALIAS, "--suite", PER_CHECK_SUITE, "--check", cid], db)
            per_check += res["timings"][PER_CHECK_SUITE]["total_s"]
    print(f"image {ALIAS} ({ref}); bare container start+remove {start:.2f} s (median of 5)\n")
    print(
        "| suite | checks | floor (s) | valorch executor (s) | ratio | `valorch run` process (s) | import (s) "
        "| check bodies (s) | workers |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    tot_floor = tot_exec = 0.0
    for suite, n, floor, total, cli, imp, chk, workers in rows:
        tot_floor += floor
        tot_exec += total
        print(
            f"| {suite} | {n} | {floor:.2f} | {total:.2f} | {total / floor:.2f}× | {cli:.2f} | {imp:.2f} "
            f"| {chk:.2f} | {workers} |"
        )
    print(f"| **all** | | {tot_floor:.2f} | {tot_exec:.2f} | {tot_exec / tot_floor:.2f}× | | | | |")
    smoke = next(r for r in rows if r[0] == PER_CHECK_SUITE)
    print(
        f"\nOne container per check ({PER_CHECK_SUITE}, {len(checks)} checks): {per_check:.2f} s "
        f"= {per_check / smoke[3]:.1f}× valorch's {smoke[3]:.2f} s for the same suite."
    )


if __name__ == "__main__":
    main()
