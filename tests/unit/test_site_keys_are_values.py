"""A page's key (ext/site/service.py ``digest``) is a function of the values it is made
from, never of which equal values happen to be one object: a verdict read back from the
manifest and the constant the diff returns give one key, so a site built in place and a
full build write the same manifest."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from orchestrator.ext.site.service import digest

VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.lists(inner, max_size=4).map(tuple)
        | st.dictionaries(st.text(max_size=5), inner, max_size=4)
    ),
    max_leaves=20,
)


def _rebuilt(value: Any) -> Any:
    """The same value made of new objects (every string too)."""
    if isinstance(value, str):
        return "".join(list(value))
    if isinstance(value, list):
        return [_rebuilt(v) for v in value]
    if isinstance(value, tuple):
        return tuple(_rebuilt(v) for v in value)
    if isinstance(value, dict):
        return {_rebuilt(k): _rebuilt(v) for k, v in value.items()}
    return value


@given(VALUES)
def test_equal_values_have_one_key_whatever_objects_hold_them(value):
    shared = [value, value]  # one object met twice
    assert digest(shared) == digest([_rebuilt(value), _rebuilt(value)])


@given(VALUES, VALUES)
def test_different_values_have_different_keys(a, b):
    if a != b or type(a) is not type(b):
        assert digest([a]) != digest([b]) or repr(a) == repr(b)
