"""Samples and metrics read raw (the site's driver cursor, the A/A history, a check's
history) decode as their column types decode them, and any value that does not is the
damaged store naming the column (exit 3), never another exception: drawn values, including
every packed array, JSON text of any shape and arbitrary bytes."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from orchestrator.errors import InfrastructureError
from orchestrator.store.coltypes import pack_samples, stored_metrics, stored_samples

FLOATS = st.lists(st.floats(allow_nan=False), max_size=20)
JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)


@given(FLOATS)
def test_packed_samples_and_their_json_text_read_back(values):
    assert stored_samples(pack_samples(values)) == tuple(values)
    assert stored_samples(json.dumps(values)) == tuple(float(v) for v in values)
    assert stored_samples(None) == ()


@given(
    st.binary(max_size=64)
    | st.text(max_size=40)
    | JSONISH.map(json.dumps)
    | st.lists(st.integers() | st.integers(min_value=10**308, max_value=10**400)).map(json.dumps)
)
def test_any_stored_samples_decode_or_name_the_column(value):
    got = _decoded_or_named(stored_samples, value, "result.samples")
    assert got is None or (isinstance(got, tuple) and all(isinstance(v, float) for v in got))


@given(JSONISH.map(json.dumps) | st.text(max_size=40))
def test_any_stored_metrics_are_an_object_or_name_the_column(value):
    got = _decoded_or_named(stored_metrics, value, "result.metrics")
    assert got is None or isinstance(got, dict)


def _decoded_or_named(decode, value, column):
    """What ``decode`` makes of ``value``, or None when it named the damaged column; any
    other exception fails the test."""
    try:
        return decode(value)
    except InfrastructureError as exc:
        assert str(exc).startswith(f"damaged store: {column} holds ")
        return None
