"""Real concurrency: the same N smoke tasks on the local engine with N slots vs 1 slot.

Prints a Markdown table (wall time of `valorch run`, speed-up). The machine's core
count bounds the speed-up: containers share the CPUs. Run: .venv/bin/python bench/bench_concurrency.py
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VALORCH = str(Path(sys.executable).with_name("valorch"))
IMAGES = [
    "cpu_debian12_py3.11_pytorch_1.13",
    "cpu_debian12_py3.11_pytorch_2.13",
    "cpu_debian12_py3.11",
    "cpu_debian11_py3.9",
]


def wall(slots: int, tmp: Path, images: list[str]) -> float:
    hosts = tmp / f"hosts{slots}.yaml"
    hosts.write_text(f"- name: local\n  slots: {slots}\n")
    args = [
        VALORCH,
        "run",
        "--hosts",
        str(hosts),
        "--json",
        "--no-gate",
        "--db",
        str(tmp / f"b{slots}.sqlite"),
    ]
    for image in images:
        args += ["--image", image]
    t = time.perf_counter()
    subprocess.run(args, cwd=ROOT, check=True, capture_output=True)
    return time.perf_counter() - t


def main() -> None:
    cores = os.cpu_count() or 1
    # N = the core count, then every test image: CPU-bound tasks overlap only as far as there are cores.
    rows = []
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        wall(len(IMAGES), tmp, IMAGES)  # warm the page cache for every image
        for images in (IMAGES[:cores], IMAGES):
            alone = statistics.median(wall(1, tmp, images[:1]) for _ in range(3))
            one = statistics.median(wall(1, tmp, images) for _ in range(3))
            many = statistics.median(wall(len(images), tmp, images) for _ in range(3))
            rows.append((len(images), alone, one, many))
    print(
        "| tasks | cores | one task alone | N tasks, 1 slot | N tasks, N slots | speed-up | N slots / one alone |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for n, alone, one, many in rows:
        print(
            f"| {n} smoke | {cores} | {alone:.1f} s | {one:.1f} s | {many:.1f} s | {one / many:.2f}× "
            f"| {many / alone:.2f}× |"
        )


if __name__ == "__main__":
    main()
