"""Placement at scale: 200 simulated hosts, 10,000 tasks with mixed requirements.

Prints a Markdown table: placement time (goal < 1 s) and makespan over a lower bound
(the longest task, and each requirement class's work over the slots that can take it;
goal ≤ 1.2×). Deterministic (seeded). Run: .venv/bin/python bench/bench_placement.py
"""

from __future__ import annotations

import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from orchestrator.hosts.match import Requirement
from orchestrator.scheduling.placement import Need, lower_bound, place
from orchestrator.spec import GPU, HostSpec

KINDS = [
    ("mi300x", "amd", "gfx942"),
    ("mi250", "amd", "gfx90a"),
    ("h100", "nvidia", "sm_90"),
    ("a100", "nvidia", "sm_80"),
    ("cpu", None, None),
]


def hosts(n: int, rng: random.Random) -> tuple[HostSpec, ...]:
    out = []
    for i in range(n):
        kind, vendor, arch = KINDS[i % len(KINDS)]
        count = rng.choice([1, 2, 4, 8]) if vendor else 0
        gpus = tuple(
            GPU(vendor=vendor, arch=arch, index=j, render_minor=128 + j) for j in range(count)
        )
        out.append(
            HostSpec(
                name=f"{kind}-{i:03d}",
                gpus=gpus,
                slots=rng.choice([2, 4, 8]),
                nvidia_runtime=vendor == "nvidia",
                labels=(kind,),
            )
        )
    return tuple(out)


def needs(n: int, rng: random.Random) -> list[Need]:
    reqs = [
        Requirement("rocm", ("gfx942",), 1),
        Requirement("rocm", ("gfx90a",), 1),
        Requirement("rocm", (), 1),
        Requirement("cuda", ("sm_90",), 1),
        Requirement("cuda", ("sm_80", "sm_90"), 1),
        Requirement("cuda", (), 2),
        Requirement("rocm", ("gfx942",), 4),
        Requirement("cpu", (), 0),
    ]
    return [Need(f"t{i}", rng.choice(reqs), rng.lognormvariate(4.0, 0.8)) for i in range(n)]


def main() -> None:
    rng = random.Random(6)
    hs, ns = hosts(200, rng), needs(10_000, rng)
    t = time.perf_counter()
    p = place(ns, hs)
    elapsed = time.perf_counter() - t
    lb = lower_bound(ns, hs)
    gpus = sum(len(h.gpus) for h in hs)
    print("| hosts | GPUs | CPU slots | tasks | placement time | makespan | lower bound | ratio |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    print(
        f"| {len(hs)} | {gpus} | {sum(h.slots for h in hs)} | {len(ns)} | {elapsed:.3f} s (goal < 1 s) "
        f"| {p.makespan:.0f} s | {lb:.0f} s | {p.makespan / lb:.3f}× (goal ≤ 1.2×) |"
    )


def gang_needs(n: int, rng: random.Random, share: float = 0.1) -> list[Need]:
    """``needs`` with a share of gang tasks: 2-8 nodes each, CPU or 1-2 GPUs per node."""
    out = needs(n, rng)
    gang_reqs = [
        Requirement("cpu", (), 0),
        Requirement("rocm", ("gfx942",), 1),
        Requirement("cuda", (), 1),
        Requirement("rocm", (), 2),
    ]
    for i in rng.sample(range(n), int(n * share)):
        out[i] = Need(
            out[i].key, rng.choice(gang_reqs), out[i].duration, nodes=rng.choice([2, 3, 4, 6, 8])
        )
    return out


def gangs() -> None:
    """Gang tasks among single-node ones: makespan against the lower bound, and when each
    class starts (mean and last start over the makespan): neither waits for the other to end."""
    rng = random.Random(25)
    hs, ns = hosts(200, rng), gang_needs(10_000, rng)
    t = time.perf_counter()
    p = place(ns, hs)
    elapsed = time.perf_counter() - t
    lb = lower_bound(ns, hs)
    nodes = {n.key: n.nodes for n in ns}
    print()
    print(
        "| tasks | gang tasks (2-8 nodes) | placement time | makespan | lower bound | ratio "
        "| single: mean / last start | gang: mean / last start |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    stats = {}
    for cls, keep in (("single", lambda k: nodes[k] == 1), ("gang", lambda k: nodes[k] > 1)):
        starts = [a.start / p.makespan for a in p.assignments if keep(a.key)]
        stats[cls] = f"{sum(starts) / len(starts):.2f} / {max(starts):.2f}"
    print(
        f"| {len(ns)} | {sum(1 for v in nodes.values() if v > 1)} | {elapsed:.3f} s | {p.makespan:.0f} s "
        f"| {lb:.0f} s | {p.makespan / lb:.3f}× | {stats['single']} | {stats['gang']} |"
    )


if __name__ == "__main__":
    main()
    gangs()
