"""Stored timing samples decoded (``result.samples``: packed little-endian float64, or the
JSON text of rows written before migration 0002). The standard library only: the column
type (store/coltypes.py) and the site's summaries process (ext/site/summaries.py, a fresh
interpreter that must start in milliseconds) decode with the same function."""

from __future__ import annotations

import json
import struct


def samples_tuple(value: bytes | str | None) -> tuple[float, ...]:
    """Stored samples as a tuple of floats (struct: one C call, any byte order)."""
    if value is None:
        return ()
    if isinstance(value, str):  # written as JSON before migration 0002
        return tuple(float(v) for v in json.loads(value))
    raw = bytes(value)
    return struct.unpack(f"<{len(raw) // 8}d", raw)
