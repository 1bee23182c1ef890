"""Real concurrency: the same N smoke tasks on the local engine with N slots vs 1 slot.

Prints a Markdown table (wall time of `valorch run`, speed-up). The machine's core
count bounds the speed-up: containers share the CPUs. Run: .venv/bin/python bench/bench_concurrency.py
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VALORCH = str(Path(sys.executable).with_name("valorch"))
IMAGES = ["cpu_debian12_py3.11_pytorch_1.13", "cpu_debian12_py3.11_pytorch_2.13", "cpu_debian12_py3.11",
          "cpu_debian11_py3.9"]


def wall(slots: int, tmp: Path) -> float:
    hosts = tmp / f"hosts{slots}.yaml"
    hosts.write_text(f"- name: local\n  slots: {slots}\n")
    args = [VALORCH, "run", "--hosts", str(hosts), "--json", "--no-gate", "--db", str(tmp / f"b{slots}.sqlite")]
    for image in IMAGES:
        args += ["--image", image]
    t = time.perf_counter()
    subprocess.run(args, cwd=ROOT, check=True, capture_output=True)
    return time.perf_counter() - t


def main() -> None:
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        wall(len(IMAGES), tmp)  # warm the page cache for every image
        one, many = wall(1, tmp), wall(len(IMAGES), tmp)
    print(f"| tasks | cores | 1 slot | {len(IMAGES)} slots | speed-up |")
    print("| --- | --- | --- | --- | --- |")
    print(f"| {len(IMAGES)} smoke | {os.cpu_count()} | {one:.1f} s | {many:.1f} s | {one / many:.2f}× |")


if __name__ == "__main__":
    main()
