"""The store's own column types (store/tables.py uses them): timing samples as packed
floats (``Samples``) and every date, JSON and sample column read through ``Checked``, whose
failure to parse a stored value is a damaged store (store/damaged.py), not a traceback.

Core only: the read paths that use the tables (``results list``, the run's plan) import no
ORM (tests/unit/test_startup_imports.py)."""

from __future__ import annotations

import json
import struct
import sys
from array import array
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from sqlalchemy import JSON, DateTime, LargeBinary, MetaData, TypeDecorator
from sqlalchemy.engine import Dialect

from .samples_codec import samples_tuple

#: the metrics key that keeps what pruned samples said (store/retention.py)
SUMMARY = "samples_summary"
#: what decoding a stored value raises when it does not parse (a float out of range in JSON
#: samples included): one tuple for the column types and the raw decoders alike
NOT_PARSED: tuple[type[Exception], ...] = (ValueError, TypeError, OverflowError, struct.error)


class Samples(TypeDecorator[Sequence[float]]):
    """Timing samples as packed little-endian float64: a tenth of the size of their
    JSON text and no float formatting on ingest (bench/bench_scale.py). Rows written
    before migration 0002 held JSON text; they read back the same."""

    impl = LargeBinary
    cache_ok = True

    def process_bind_param(self, value: Sequence[float] | None, dialect: Dialect) -> bytes:
        return pack_samples(value)

    def process_result_value(self, value: bytes | str | None, dialect: Dialect) -> list[float]:
        return list(samples_tuple(value))


def pack_samples(values: Iterable[float] | None) -> bytes:
    try:
        arr = array("d", values or ())  # a list of floats (or ints): no per-value Python call
    except TypeError:
        arr = array("d", [float(v) for v in values or ()])
    if sys.byteorder != "little":
        arr.byteswap()
    return arr.tobytes()


def stored_samples(value: bytes | str | None) -> tuple[float, ...]:
    """``result.samples`` read raw (a driver's cursor, a Core row of a coerced column), not
    through its ``Checked`` type: decoded as that type decodes it, and a value that does not
    parse is the same damaged store (exit 3), never a traceback."""
    try:
        return samples_tuple(value)
    except NOT_PARSED as exc:
        from .damaged import damaged_value

        raise damaged_value("result.samples", value, exc, "a sample array") from None


def stored_metrics(value: str | dict[str, Any] | None) -> dict[str, Any] | None:
    """``result.metrics`` read raw: JSON text, or a dict where the driver parses JSON
    itself. Every writer stores an object; anything else (text that does not parse, a JSON
    list) is a damaged store (exit 3), never a traceback further on."""
    if value is None or isinstance(value, dict):
        return value
    if value == "{}":
        return {}
    try:
        parsed = json.loads(value)
        if not isinstance(parsed, dict):
            raise TypeError(f"a JSON {type(parsed).__name__}, not an object")
        return parsed
    except NOT_PARSED as exc:
        from .damaged import damaged_value

        raise damaged_value("result.metrics", value, exc, "a JSON object") from None


class Checked(TypeDecorator[Any]):
    """A stored column's type whose reading fails as "damaged store: TABLE.COLUMN holds …"
    (store/damaged.py, exit 3), not as the ValueError or JSONDecodeError of a value that does
    not parse (``run.started = 'garbage'``, ``run.meta = '{not json'``)."""

    impl = DateTime  # replaced by the wrapped type of each column
    cache_ok = True

    def __init__(self, inner: Any, where: str) -> None:
        super().__init__()
        self.impl = self.inner = inner
        self.where = where

    @property
    def comparator_factory(self) -> Any:  # type: ignore[override]  # the wrapped type's
        # (a read-only property over the base's attribute: JSON's col["key"] keeps working)
        return self.inner.comparator_factory

    def result_processor(self, dialect: Dialect, coltype: object) -> Callable[[Any], Any] | None:
        inner = self.inner.dialect_impl(dialect).result_processor(dialect, coltype)
        if inner is None:
            return None
        where = self.where
        kind = {"DateTime": "a date/time", "JSON": "JSON", "Samples": "a sample array"}.get(
            type(self.inner).__name__, "a valid value"
        )

        def process(value: Any) -> Any:
            try:
                return inner(value)
            except NOT_PARSED as exc:
                from .damaged import damaged_value

                raise damaged_value(where, value, exc, kind) from None

        return process


def check_values(metadata: MetaData) -> None:
    """Wrap every date, JSON and sample column of ``metadata`` in ``Checked``."""
    for table in metadata.tables.values():
        for column in table.columns:
            if isinstance(column.type, (DateTime, JSON, Samples)):
                column.type = Checked(column.type, f"{table.name}.{column.name}")
