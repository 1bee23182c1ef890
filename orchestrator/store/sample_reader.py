"""The passing results' samples of a SQLite store, read by another process on a read-only
connection of its own (ext/site/summaries.py). The standard library only: that process is
a fresh interpreter, and imports nothing that takes time to import. The statement comes
from the caller, compiled from the store's Core query (site_queries.passing_samples_source):
no query is written twice."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote


def passing_samples(path: str, sql: str) -> Iterator[tuple[int, Any]]:
    """(result id, samples as stored) of each row ``sql`` selects from the database at
    ``path``, opened read-only."""
    conn = sqlite3.connect(f"file:{quote(path)}?mode=ro", uri=True)
    try:
        cursor = conn.execute(sql)
        while batch := cursor.fetchmany(4096):
            yield from batch
    finally:
        conn.close()
