"""Counted nouns read as English: one of a thing is singular, any other count plural, and
no "(s)" or "1 hosts" can be made (the class of "1 hosts", "1 rows", "run(s)")."""

from hypothesis import given
from hypothesis import strategies as st

from orchestrator.words import count, plural

NOUNS = ("host", "run", "image", "environment", "check", "result", "row", "timed check", "entry")


@given(st.integers(min_value=0, max_value=10**6), st.sampled_from(NOUNS))
def test_one_is_singular_every_other_count_plural(n, noun):
    said = count(n, noun)
    assert said.startswith(f"{n} ") and "(s)" not in said
    assert said == (f"1 {noun}" if n == 1 else f"{n} {plural(noun)}")
    assert plural(noun) != noun


def test_the_plurals_valorch_says():
    assert [plural(n) for n in ("host", "entry", "crash", "day", "match")] == [
        "hosts",
        "entries",
        "crashes",
        "days",
        "matches",
    ]
    assert count(1, "crash or timeout", "crashes or timeouts") == "1 crash or timeout"
    assert count(0, "crash or timeout", "crashes or timeouts") == "0 crashes or timeouts"


def test_a_noun_after_its_adjective_is_the_word_made_plural():
    """ "22 timeds check" was the head word made plural; the noun is the last word, before a
    parenthesis that explains it."""
    assert count(22, "timed check") == "22 timed checks"
    assert (
        count(2, "environment (image on a host class)") == "2 environments (image on a host class)"
    )


def test_a_sub_second_budget_reads_as_what_it_is():
    """ "0s of 0s (279 %)": a budget under a second was rounded to nothing."""
    from orchestrator.services.budgets import used_line

    line = used_line(
        "1a2b3c4d",
        "host",
        [{"suite": "smoke", "used_s": 0.837, "budget_s": 0.3, "over": True, "tier": "smoke"}],
    )
    assert "0.84s of 0.3s (279%, over by 0.54s)" in line, line
