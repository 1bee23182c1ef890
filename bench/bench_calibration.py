"""Calibration of the timing rule on A/A data.

1. A/A runs: the same image (same digest) on the same host, repeated: by default this
   script makes them (`valorch run --image host --suite kernels --suite smoke`, RUNS times);
   or pass --db with a store that has them (the image/host with the most runs is used).
2. The measured noise per timed check: its sample count, the within-run CV of its samples,
   and the run-to-run noise of its median (runs the probe flagged as taken on a busy host
   are left out where enough quiet ones remain).
3. Synthetic series with that noise: PAIRS A/A pairs of runs, and as many with the head
   slowed by 5 %, each pair one report over every timed check (Benjamini–Hochberg over it),
   judged by the rule `valorch diff` applies (orchestrator/regression/rule.py) with the run-to-run noise
   known, as it is once a check has A/A history. Prints the false-regression rate (goal
   ≤ 1 % of timed checks) and the share of 5 % slowdowns found (goal ≥ 90 %).

    .venv/bin/python bench/bench_calibration.py [--db AA.sqlite] [--runs 8] [--pairs 40]
"""

from __future__ import annotations

import argparse
import math
import os
import random
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path
from statistics import median

from sqlalchemy import func, select

from orchestrator.regression import changepoints, noise
from orchestrator.regression import rule as diff
from orchestrator.store.db import open_engine, session_factory
from orchestrator.store.models import Check, Result, Run

VALORCH = str(Path(sys.executable).with_name("valorch"))
SHIFT = 1.05


def collect(db: Path, runs: int, threads: int | None) -> None:
    env = dict(os.environ)
    if threads:  # one framework thread: no barrier spinning against other work on a shared host
        env.update(OMP_NUM_THREADS=str(threads), MKL_NUM_THREADS=str(threads))
    for i in range(runs):
        proc = subprocess.run(
            [
                VALORCH,
                "run",
                "--image",
                "host",
                "--suite",
                "kernels",
                "--suite",
                "smoke",
                "--no-gate",
                "--no-matrix",
                "--json",
                "--db",
                str(db),
            ],
            capture_output=True,
            text=True,
            env=env,
        )
        if proc.returncode not in (0, 1):
            sys.exit(f"A/A run {i + 1} failed ({proc.returncode}): {proc.stderr[-1500:]}")


def measure(db: Path) -> tuple[dict[str, dict], dict]:
    factory = session_factory(open_engine(str(db)))
    with factory() as s:
        image_id, host_id, _n = s.execute(
            select(Run.image_id, Run.host_id, func.count())
            .group_by(Run.image_id, Run.host_id)
            .order_by(func.count().desc())
        ).first()
        run_ids = list(
            s.scalars(
                select(Run.id)
                .where(Run.image_id == image_id, Run.host_id == host_id)
                .order_by(Run.started)
            )
        )
        rows = s.execute(
            select(Result.run_id, Check.check_id, Result.samples, Result.metrics)
            .join(Check, Check.id == Result.check_pk)
            .where(Result.run_id.in_(run_ids), Result.status == "pass")
        ).all()
    order = {r: i for i, r in enumerate(run_ids)}
    per: dict[str, list] = {}
    busy = Counter()
    for rid, check, samples, metrics in rows:
        if len(samples) >= 3:
            per.setdefault(check, []).append((order[rid], samples, noise.noisy(metrics)))
            busy[rid] |= noise.noisy(metrics)
    out = {}
    for check, runs in per.items():
        runs.sort(key=lambda r: r[0])
        quiet = [r for r in runs if not r[2]]
        use = quiet if len(quiet) >= 4 else runs
        meds = [median(s) for _, s, _ in use]
        out[check] = {
            "n": int(median(len(s) for _, s, _ in runs)),
            "cv": median(noise.cv(s) or 0.0 for _, s, _ in use),
            "sigma": changepoints.robust_sigma([math.log(m) for m in meds]),
            "runs": len(use),
            "quiet": len(quiet) >= 4,
        }
    return out, {"runs": len(run_ids), "busy_runs": sum(busy.values())}


def synthetic_run(rng: random.Random, m: dict, factor: float) -> list[float]:
    """One run's samples: a run-to-run offset (σ measured on A/A runs), then the noise within it."""
    offset = factor * math.exp(rng.gauss(0, m["sigma"]))
    return [1e-3 * offset * math.exp(rng.gauss(0, m["cv"])) for _ in range(m["n"])]


def judge(
    rng: random.Random, noise_of: dict[str, dict], shift: float, pairs: int, runs: int = 1
) -> Counter:
    """How many (pair, check) were counted slower; each side pools ``runs`` runs (as
    `valorch diff latest:ALIAS:N latest:ALIAS2:N` does)."""
    slower: Counter = Counter()
    calib = {("aa", c): m["sigma"] for c, m in noise_of.items()}
    for _ in range(pairs):
        base, head = [], []
        for check, m in noise_of.items():
            for r in range(runs):
                base.append(
                    diff.Obs(
                        "aa", check, "pass", samples=tuple(synthetic_run(rng, m, 1.0)), run=f"b{r}"
                    )
                )
                head.append(
                    diff.Obs(
                        "aa",
                        check,
                        "pass",
                        samples=tuple(synthetic_run(rng, m, shift)),
                        run=f"h{r}",
                    )
                )
        report = diff.compare(
            diff.Side("base", "run", tuple(base)),
            diff.Side("head", "run", tuple(head)),
            run_noise=calib,
        )
        for c in report.changes:
            if c.kind in diff.COUNTED:
                slower[c.check] += 1
    return slower


def smallest(m: dict, runs: int) -> float:
    """The smallest slowdown found 9 times in 10 with ``runs`` runs a side, from the measured
    noise (the standard error noise.ratio_se gives such samples)."""
    within = noise.MEDIAN_SE * m["cv"] / math.sqrt(m["n"] * runs)
    se = math.hypot(math.sqrt(2) * within, m["sigma"] * math.sqrt(2 / runs))
    return noise.detectable(se, diff.DEFAULT_THRESHOLD, diff.ALPHA)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--db", type=Path)
    ap.add_argument("--runs", type=int, default=8)
    ap.add_argument("--pairs", type=int, default=40)
    ap.add_argument(
        "--pool", default="1,5,10", help="runs pooled on each side of a comparison (latest:ALIAS:N)"
    )
    ap.add_argument(
        "--threads", type=int, default=None, help="OMP/MKL threads for the A/A runs it makes"
    )
    args = ap.parse_args()
    pools = [int(x) for x in args.pool.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        db = args.db
        if db is None:
            db = Path(tmp) / "aa.sqlite"
            collect(db, args.runs, args.threads)
        noise_of, info = measure(db)
    rng = random.Random(13)
    fp = {n: judge(rng, noise_of, 1.0, args.pairs, n) for n in pools}
    found = {n: judge(rng, noise_of, SHIFT, args.pairs, n) for n in pools}
    total = args.pairs * len(noise_of)
    print(
        f"## Timing rule calibration: {len(noise_of)} timed checks, A/A data of {info['runs']} runs "
        f"({info['busy_runs']} on a busy host), {args.pairs} synthetic pairs each, "
        f"{' / '.join(map(str, pools))} runs pooled a side\n"
    )
    cols = " | ".join(
        f"{n} run{'s' if n > 1 else ''}: detectable · A/A false · 5 % found" for n in pools
    )
    print(f"| check | samples | CV in a run | run-to-run σ | {cols} |")
    print("|---|---|---|---|" + "---|" * len(pools))
    for check, m in sorted(noise_of.items()):
        cells = " | ".join(
            f"{smallest(m, n) * 100:.1f} % · {fp[n][check]}/{args.pairs} · "
            f"{found[n][check]}/{args.pairs}"
            for n in pools
        )
        print(
            f"| `{check}` | {m['n']} | {m['cv'] * 100:.2f} % | {m['sigma'] * 100:.2f} %"
            f"{'' if m['quiet'] else ' (busy)'} | {cells} |"
        )
    print(
        "\n| runs pooled a side | A/A false regressions (goal ≤ 1 %) | 5 % found, all timed checks (goal ≥ 90 %) "
        "| 5 % found where the noise allows it (smallest detectable ≤ 5 %) |"
    )
    print("|---|---|---|---|")
    for n in pools:
        detectable = [c for c, m in noise_of.items() if smallest(m, n) <= SHIFT - 1]
        n_det = len(detectable) * args.pairs
        rate_det = sum(found[n][c] for c in detectable) / n_det if n_det else float("nan")
        print(
            f"| {n} | {sum(fp[n].values()) / total:.2%} | {sum(found[n].values()) / total:.1%} "
            f"| {rate_det:.1%} ({len(detectable)} of {len(noise_of)} checks) |"
        )
    print(f"\nload average now: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
