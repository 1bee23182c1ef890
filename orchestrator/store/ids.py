"""Ids of runs and batches: time-ordered UUIDs (version 7, RFC 9562).

A random uuid4 lands anywhere in the indexes that start with it (the result table's
unique (run_id, check_pk, attempt), the run table's primary key): once a store outgrows
the page cache every insert touches a cold page. A version-7 id starts with its creation
time in milliseconds, so new runs go to the right edge of those indexes and bulk ingest
stays fast at 10M results (bench/bench_scale_fleet.py). The ids stay 36-character UUIDs,
unique (74 random bits) and stable (a pushed run keeps its id); ids made before are uuid4s
and are kept as they are.
"""

from __future__ import annotations

import secrets
import time
import uuid


def new_id(ms: int | None = None, rand: int | None = None) -> str:
    """A version-7 UUID for ``ms`` (milliseconds since the epoch, now by default) and 74 random
    bits (``rand``: for generated data sets that must be reproducible)."""
    ms = time.time_ns() // 1_000_000 if ms is None else ms
    rand = secrets.randbits(74) if rand is None else rand & ((1 << 74) - 1)
    value = (ms & ((1 << 48) - 1)) << 80 | 0x7 << 76 | (rand >> 62) << 64 | 0b10 << 62 | (rand & ((1 << 62) - 1))
    return str(uuid.UUID(int=value))
