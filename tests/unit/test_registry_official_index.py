"""Where valorch reaches the engine's official index: what the engine's ``docker info`` says
(its mirrors, then its index address), never an address written in valorch."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from orchestrator.registry import insecure


def _config(mirrors=(), engine_mirrors=(), index="https://index.example/v1/", official=True):
    return {
        "IndexConfigs": {
            "hub.example": {"Name": "hub.example", "Official": official, "Mirrors": list(mirrors)}
        },
        "Mirrors": list(engine_mirrors),
        "IndexServerAddress": index,
    }


def test_mirrors_first_then_the_index_host():
    config = _config(mirrors=["http://127.0.0.1:5999/"])
    assert insecure.official_endpoints("hub.example", config) == (
        "http://127.0.0.1:5999",
        "https://index.example",
    )


def test_the_engine_wide_mirrors_when_the_index_names_none():
    config = _config(engine_mirrors=["https://mirror.example"])
    assert insecure.official_endpoints("hub.example", config)[0] == "https://mirror.example"


def test_only_the_official_index_and_only_with_an_engine():
    assert insecure.official_endpoints("other.example", _config()) == ()
    assert insecure.official_endpoints("hub.example", _config(official=False)) == ()
    assert insecure.official_endpoints("hub.example", {}) == ()  # no engine answered


JUNK = st.one_of(st.none(), st.integers(), st.text(max_size=30), st.lists(st.text(max_size=30)))


@given(
    mirrors=st.one_of(JUNK, st.lists(st.one_of(st.text(max_size=40), st.integers()))),
    index=st.one_of(JUNK, st.text(max_size=60)),
    official=st.one_of(st.booleans(), JUNK),
)
def test_any_engine_answer_gives_only_http_urls_it_contained(mirrors, index, official):
    config = {
        "IndexConfigs": {"hub.example": {"Official": official, "Mirrors": mirrors}},
        "IndexServerAddress": index,
    }
    found = insecure.official_endpoints("hub.example", config)
    said = " ".join(str(x) for x in (mirrors if isinstance(mirrors, list) else [])) + str(index)
    for url in found:
        assert url.startswith(("http://", "https://")) and url.split("://", 1)[1]
        assert url.split("://", 1)[1].split("/", 1)[0] in said
    if official is not True:
        assert found == ()
