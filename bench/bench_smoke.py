"""Wall time of the smoke suite per image, and where it goes.

For each image: valorch's own wall time for `valorch run --image X` (median of
3), the container's create/start/run times, the framework import inside the
worker, the check bodies, and the floor: a bare `docker run --rm IMAGE true`.
Prints a Markdown table (paste into docs/benchmarks.md).
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
IMAGES = [
    ("host", None),
    ("cpu_debian12_py3.11_pytorch_1.13", "valorch/test:debian-torch"),
    ("cpu_debian12_py3.11_pytorch_2.13", "valorch/test:pip-torch"),
    ("cpu_debian11_py3.9", "valorch/base:bullseye"),
]
REPS = 3


def timed(argv: list[str]) -> tuple[float, str]:
    t0 = time.perf_counter()
    out = subprocess.run(argv, capture_output=True, text=True, cwd=ROOT)
    return time.perf_counter() - t0, out.stdout


def main() -> None:
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        db = f"{tmp}/bench.sqlite"
        for alias, ref in IMAGES:
            walls, parts = [], []
            for _ in range(REPS):
                wall, out = timed(
                    [VALORCH, "run", "--image", alias, "--json", "--no-gate", "--db", db]
                )
                walls.append(wall)
                parts.append(json.loads(out)[0]["timings"]["smoke"])
            floor = (
                statistics.median(
                    timed(["docker", "run", "--rm", "--network", "none", ref, "true"])[0]
                    for _ in range(REPS)
                )
                if ref
                else 0.0
            )
            med = {
                k: statistics.median(p.get(k, 0.0) for p in parts)
                for k in ("create_s", "start_s", "run_s", "import_s", "checks_s", "total_s")
            }
            rows.append((alias, statistics.median(walls), floor, med))
    print(
        "| image | valorch wall (s) | bare `docker run true` (s) | create+start (s) | framework import (s) "
        "| check bodies (s) | executor total (s) |"
    )
    print("|---|---|---|---|---|---|---|")
    for alias, wall, floor, m in rows:
        print(
            f"| {alias} | {wall:.2f} | {floor:.2f} | {m['create_s'] + m['start_s']:.2f} | {m['import_s']:.2f} "
            f"| {m['checks_s']:.2f} | {m['total_s']:.2f} |"
        )


if __name__ == "__main__":
    main()
