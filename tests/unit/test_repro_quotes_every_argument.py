"""The repro command (render/repro.py) quotes every argument, whatever a stored or
imported field holds: a shell that reads it back gets the same words, so a digest such as
``sha256:$(touch x)`` stays one word and runs nothing."""

from __future__ import annotations

import shlex

from hypothesis import given, settings
from hypothesis import strategies as st

from orchestrator.render.repro import command

WORDS = st.text(st.characters(exclude_categories=("Cs",), exclude_characters="\x00"), min_size=1)


@settings(max_examples=300, deadline=None)
@given(
    alias=WORDS,
    reference=WORDS,
    digest=st.none() | WORDS,
    check=WORDS,
    suite=WORDS,
    cpu_only=st.booleans(),
)
def test_the_shell_reads_back_the_words_it_was_given(
    alias, reference, digest, check, suite, cpu_only
):
    text = command(
        alias=alias,
        reference=reference,
        digest=digest,
        check=check,
        suite=suite,
        cpu_only=cpu_only,
    )
    argv = shlex.split(text)
    assert argv[:3] == ["valorch", "run", "--image"]
    assert argv[4:8] == ["--suite", suite, "--check", check]
    assert argv[8:] == (["--cpu-only"] if cpu_only else [])
    assert argv[3] in (alias, "host") or argv[3].endswith(f"@{digest}")


def test_a_hostile_digest_is_one_quoted_word():
    text = command(
        alias="img", reference="registry.example/x:1", digest="sha256:$(touch /tmp/x)", check="a.b"
    )
    assert "'registry.example/x@sha256:$(touch /tmp/x)'" in text
