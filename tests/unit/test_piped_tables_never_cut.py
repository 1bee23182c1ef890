"""Property: a table printed where output is not a terminal never cuts a value: every
word of every cell appears whole, and no line is wider than the width unless it holds a
word that is itself wider."""

import io

from hypothesis import given, settings
from hypothesis import strategies as st

from orchestrator.commands.common import SafeConsole
from orchestrator.commands.tables import Table

WORD = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789:._-", min_size=1, max_size=40)
CELL = st.lists(WORD, min_size=0, max_size=4).map(" ".join)


@settings(max_examples=150, deadline=None)
@given(
    width=st.integers(min_value=20, max_value=160),
    ncols=st.integers(min_value=1, max_value=7),
    data=st.data(),
)
def test_piped_table_keeps_every_word_whole(width, ncols, data):
    headers = [f"h{i}" for i in range(ncols)]
    rows = data.draw(st.lists(st.lists(CELL, min_size=ncols, max_size=ncols), max_size=5))
    table = Table(*headers)
    for row in rows:
        table.add_row(*row)
    sink = io.StringIO()
    SafeConsole(file=sink, width=width, highlight=False).print(table)
    text = sink.getvalue()
    tokens = set(text.replace("│", " ").replace("┃", " ").split())
    for row in rows:
        for value in row:
            for word in value.split():
                assert word in tokens, word
    longest = max((len(w) for row in rows for v in row for w in v.split()), default=0)
    for line in text.splitlines():
        assert len(line) <= max(width, longest + len("h0: ") + 2), line
    assert "…" not in text
