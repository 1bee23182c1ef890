"""netbody: the nesting of JSON counted without recursion (equal to a recursive count on any
JSON document, strings with brackets and escapes included), and a body too deep or too large
refused before the parser sees it."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from orchestrator import netbody

scalars = st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.text(max_size=8)
documents = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=30,
)


def nesting(doc) -> int:
    if isinstance(doc, list):
        return 1 + max((nesting(v) for v in doc), default=0)
    if isinstance(doc, dict):
        return 1 + max((nesting(v) for v in doc.values()), default=0)
    return 0


@settings(max_examples=300)
@given(documents, st.booleans())
def test_depth_is_the_nesting_of_any_document(doc, ascii_only):
    text = json.dumps(doc, ensure_ascii=ascii_only)
    assert netbody.depth(text, limit=1000) == nesting(doc)
    assert netbody.loads(text.encode(), limit=1000) == doc


@pytest.mark.parametrize("opener", ["[", '{"a":'])
def test_an_endless_document_is_refused_after_the_limit_not_parsed(opener):
    body = (opener * 200_000).encode()
    assert netbody.depth(body, limit=64) == 65  # the scan stopped there
    with pytest.raises(netbody.TooDeepError, match="deeper than 64 levels"):
        netbody.loads(body, cap=len(body))


def test_brackets_inside_strings_do_not_count():
    assert netbody.depth(json.dumps({"a": '[[[[{{{{\\"[['})) == 1


def test_a_body_over_its_cap_is_refused():
    with pytest.raises(netbody.TooLargeError, match="more than the 1 KiB valorch reads"):
        netbody.loads(b" " * 1025 + b"{}", cap=1024)
