"""Scale: 1,000 runs × 300 checks (300,000 results, ~10 timing samples each) in a fresh SQLite DB.

Measures, against the goals set for the results store, the matrix and the diff:
  ingest   all rows through store/bulk.py (SQLAlchemy Core executemany) + commit   goal < 10 s
  render   the matrix of the latest run per image → Markdown (the `matrix render` path)  goal < 2 s
  diff     two runs of one image → Report → Markdown (the `valorch diff` path)       goal < 1 s
Prints a Markdown table (ratio = measured / goal; below 1 meets the goal).

    .venv/bin/python bench/bench_scale.py [RUNS] [CHECKS]
"""

from __future__ import annotations

import os
import random
import sys
import tempfile
import time
import uuid
from datetime import datetime, timedelta
from pathlib import Path

from orchestrator.render.diff import diff_md
from orchestrator.services import views
from orchestrator.services.diff import report_for
from orchestrator.store import bulk, queries
from orchestrator.store.coltypes import pack_samples
from orchestrator.store.db import open_engine, session_factory
from orchestrator.store.models import Host, Image, Result, Run

RUNS = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
CHECKS = int(sys.argv[2]) if len(sys.argv) > 2 else 300
IMAGES = 10
SAMPLES = 10
GOALS = {"ingest": 10.0, "render": 2.0, "diff": 1.0}


def generate(rng: random.Random) -> tuple[list[dict], list[dict], list[dict], dict, list[dict]]:
    images = [
        {
            "id": i + 1,
            "alias": f"bench_img_{i}",
            "reference": f"bench/img:{i}",
            "digest": f"sha256:{i:064x}",
            "backend": ("rocm", "cuda", "cpu")[i % 3],
            "family": "bench",
            "components": {},
        }
        for i in range(IMAGES)
    ]
    hosts = [
        {"id": 1, "name": "bench-a", "fingerprint": "a" * 64, "spec": {"name": "bench-a"}},
        {"id": 2, "name": "bench-b", "fingerprint": "b" * 64, "spec": {"name": "bench-b"}},
    ]
    t0 = datetime(2025, 1, 1)
    runs = [
        {
            "id": str(uuid.UUID(int=rng.getrandbits(128))),
            "batch": f"batch-{r // IMAGES:04d}",
            "job": "bench",
            "image_id": r % IMAGES + 1,
            "host_id": r % 2 + 1,
            "executor": "docker",
            "valorch_version": "bench",
            "spec_hash": "0" * 16,
            "cpu_only": False,
            "started": t0 + timedelta(minutes=r),
            "ended": t0 + timedelta(minutes=r, seconds=30),
            "state": "done",
            "meta": {},
        }
        for r in range(RUNS)
    ]
    checks = {
        (f"kernels.bench.op{c:03d}", 1): {
            "feature": f"op {c}",
            "kind": "kernel",
            "library": "bench",
            "unit": "s",
        }
        for c in range(CHECKS)
    }
    return images, hosts, runs, checks, []


def results_for(rng: random.Random, runs: list[dict], pks: dict) -> list[dict]:
    base = {k: rng.uniform(1e-4, 1e-2) for k in pks}
    rows = []
    last = runs[-IMAGES:]  # the newest run of each image: a few planted slowdowns and failures
    recent = {r["id"] for r in runs[-2 * IMAGES :]}  # the two runs diffed: no random skips
    keys = sorted(pks)
    slow, broken = set(keys[:5]), keys[7]
    for run in runs:
        newest = run in last
        for key, pk in pks.items():
            k = 1.2 if newest and key in slow else 1.0
            status = (
                "fail"
                if newest and key == broken
                else ("pass" if run["id"] in recent or rng.random() > 0.01 else "skip")
            )
            samples = (
                [base[key] * k * rng.uniform(0.99, 1.01) for _ in range(SAMPLES)]
                if status == "pass"
                else []
            )
            rows.append(
                {
                    "run_id": run["id"],
                    "task_id": None,
                    "check_pk": pk,
                    "attempt": 1,
                    "status": status,
                    "duration_s": 0.01,
                    "message": "",
                    "log": "",
                    "metrics": {},
                    "samples": samples,
                }
            )
    return rows


def main() -> None:
    rng = random.Random(42)
    images, hosts, runs, checks, _ = generate(rng)
    with tempfile.TemporaryDirectory() as tmp:
        factory = session_factory(open_engine(str(Path(tmp) / "scale.sqlite")))
        with factory() as session:  # check rows first: result rows need their keys
            pks = queries.check_pks(session, checks, checks)
            session.commit()
        rows = results_for(rng, runs, pks)
        t = time.perf_counter()
        with factory() as session:
            bulk.insert_rows(session, Image, images)
            bulk.insert_rows(session, Host, hosts)
            bulk.insert_rows(session, Run, runs)
            bulk.insert_rows(session, Result, rows)
            session.commit()
        ingest = time.perf_counter() - t

        t = time.perf_counter()
        with factory() as session:
            latest = queries.latest_runs(session)
            results = {r.id: queries.run_results(session, r.id) for r in latest}
            md = views.matrix_markdown(latest, results)
        render = time.perf_counter() - t
        assert len(latest) == IMAGES and md.count("\n") > CHECKS

        old, new = runs[-2 * IMAGES]["id"], runs[-IMAGES]["id"]  # two runs of image 0
        t = time.perf_counter()
        with factory() as session:
            report = report_for(session, old, new, 0.05, None)
            text = diff_md(report)
        diff_s = time.perf_counter() - t
        assert (
            report.regressed
            and report.counts.get("slower") == 5
            and report.counts.get("regressed") == 1
        ), report.counts
        assert "kernels.bench.op007" in text

    t = time.perf_counter()
    for r in rows:  # what the ingest pays to pack the samples (3,000,000 floats → float64 bytes)
        pack_samples(r["samples"])
    encode = time.perf_counter() - t
    measured = {"ingest": ingest, "render": render, "diff": diff_s}
    print(
        f"## Scale: {RUNS} runs × {CHECKS} checks = {len(rows):,} results, {SAMPLES} samples each\n"
    )
    print("| step | measured | goal | ratio |")
    print("|---|---|---|---|")
    what = {
        "ingest": f"ingest {len(rows):,} results (Core executemany + commit)",
        "render": f"matrix of the latest run per image ({IMAGES} × {CHECKS}) → Markdown",
        "diff": f"diff two runs ({CHECKS} checks, MWU per timed check) → Markdown",
    }
    for k, v in measured.items():
        print(f"| {what[k]} | {v:.2f} s | < {GOALS[k]:g} s | {v / GOALS[k]:.2f} |")
    print(
        f"\nof the ingest: {encode:.2f} s is packing the samples (float64 blobs); "
        f"load average during the run: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"
    )


if __name__ == "__main__":
    main()
