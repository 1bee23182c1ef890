"""Launch overhead of a 2-node task against the same collectives in one container.

Through the real CLI, each ``--reps`` times (median reported):

- one container: ``kernels.all_reduce.gloo`` (all_reduce, broadcast, all_gather with 2
  gloo ranks as 2 processes in one container);
- two engines: suite ``multinode`` on 2 nodes through a hosts file (this machine's
  engine and ``--engine2``), one container per engine;
- Slurm: suite ``multinode`` on 2 nodes with ``--executor slurm`` (scripts/start-slurm.sh).

Where the time goes comes from the task's stored timings: container create and start,
the probe's run (framework import, rendezvous + checks), Slurm's submit and queue.
Run: .venv/bin/python bench/bench_multinode.py --engine2 unix:///path/docker.sock
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VALORCH = str(Path(sys.executable).with_name("valorch"))
ALIAS = "cpu_debian12_py3.11_pytorch_1.13"


def run(args: list[str], db: Path) -> tuple[float, dict, dict]:
    t = time.perf_counter()
    done = subprocess.run(
        [VALORCH, "run", *args, "--db", str(db), "--no-gate", "--json"],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    wall = time.perf_counter() - t
    if done.returncode != 0:
        raise SystemExit(f"valorch run failed: {done.stderr[-2000:]}")
    (result,) = json.loads(done.stdout)
    con = sqlite3.connect(db)
    (timings,) = con.execute("SELECT timings FROM task ORDER BY id DESC LIMIT 1").fetchone()
    con.close()
    return wall, json.loads(timings), result


def series(name: str, args: list[str], reps: int, tmp: Path) -> dict:
    walls, timings, firsts = [], [], []
    for i in range(reps):
        wall, t, result = run(args, tmp / f"{name}-{i}.sqlite")
        walls.append(wall)
        timings.append(t)
        by = {r["check"]: r for r in result["results"]}
        first = next((r for c, r in by.items() if "all_reduce" in c and "busbw" not in c), None)
        firsts.append(first["duration_s"] if first else 0.0)
        assert all(r["status"] == "pass" for r in result["results"]), by
    med = {k: statistics.median(t.get(k, 0.0) for t in timings) for k in timings[0]}
    return {
        "name": name,
        "wall": statistics.median(walls),
        "timings": med,
        "first": statistics.median(firsts),
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--engine2", help="a second Docker engine's endpoint (unix:// or tcp://)")
    ap.add_argument("--slurm", action="store_true", help="also on the Slurm test cluster")
    ap.add_argument("--reps", type=int, default=3)
    a = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="valorch-bench-mn-"))
    job = tmp / "job.yaml"
    job.write_text(
        f"name: bench-multinode\nimages: [{ALIAS}]\nsuites:\n"
        "  - {name: multinode, nodes: 2, checks: [multinode.all_reduce, multinode.all_gather, "
        "multinode.broadcast]}\n"
    )
    rows = [
        series(
            "one container (2 ranks)",
            ["--image", ALIAS, "--suite", "kernels", "--check", "kernels.all_reduce.gloo"],
            a.reps,
            tmp,
        )
    ]
    if a.engine2:
        hosts = tmp / "hosts.yaml"
        hosts.write_text(
            f"hosts:\n  - {{name: a, endpoint: 'unix:///var/run/docker.sock', address: 127.0.0.1}}\n"
            f"  - {{name: b, endpoint: '{a.engine2}', address: 127.0.0.2}}\n"
        )
        rows.append(
            series("two engines (2 nodes)", ["--job", str(job), "--hosts", str(hosts)], a.reps, tmp)
        )
    if a.slurm:
        rows.append(
            series(
                "Slurm (2 nodes)",
                ["--job", str(job), "--executor", "slurm", "--slurm-spool", str(tmp / "spool")],
                a.reps,
                tmp,
            )
        )
    base = rows[0]["wall"]
    print(
        "| where | wall (median) | ratio | create | start | probe run | submit + queue | first collective check |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        t = r["timings"]
        print(
            f"| {r['name']} | {r['wall']:.2f} s | {r['wall'] / base:.2f}× | {t.get('create_s', 0):.2f} s "
            f"| {t.get('start_s', 0):.2f} s | {t.get('run_s', 0):.2f} s "
            f"| {t.get('submit_s', 0) + t.get('queue_s', 0):.2f} s | {r['first']:.2f} s |"
        )


if __name__ == "__main__":
    main()
