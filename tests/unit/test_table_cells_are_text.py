"""Every table the CLI prints shows a cell's text as it is (commands/tables.py): rich markup
in a workload's message, an engine's error or an image's component value (``[red]``,
``[link=…]``, ``[/]``) neither styles nor links the table; controls are made visible.
Only valorch's own ``styled`` cells carry a style."""

import io
import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rich.text import Text

from orchestrator import encode
from orchestrator.commands.common import SafeConsole
from orchestrator.commands.tables import Table, cell, styled

MARKUP = st.sampled_from(
    [
        "[red]",
        "[/]",
        "[/red]",
        "[bold]",
        "[link=https://evil.example]",
        "[on blue]",
        "\\[",
        "]",
        "[blink]",
        "\x1b[31m",
        "\x1b]8;;https://x\x07",
        "\x9b2J",
        "\n",
        "é",
        "[",
        ":smile:",
    ]
)
TEXT = st.lists(st.one_of(MARKUP, st.text(max_size=5)), max_size=8).map("".join)


@given(TEXT)
def test_a_str_cell_is_its_text_with_no_style(text):
    shown = cell(text)
    assert isinstance(shown, Text)
    assert shown.plain == encode.terminal(text) and not shown.spans and not shown.style


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(TEXT, TEXT)
def test_a_printed_table_has_no_style_or_link_from_its_cells(a, b):
    buf = io.StringIO()
    console = SafeConsole(file=buf, force_terminal=True, color_system="truecolor", width=400)
    table = Table("x", "y", title=a, show_header=False, box=None)
    table.add_row(a, b)
    console.print(table)
    out = buf.getvalue()
    assert "\x1b]8;" not in out  # no hyperlink
    # the only escape sequences are the title's italic (rich's own) and resets
    codes = set(re.findall(r"\x1b\[[0-9;]*m", out))
    assert codes <= {"\x1b[3m", "\x1b[0m", "\x1b[23m"}, codes


def test_valorchs_own_styled_cell_is_styled_and_its_text_literal():
    buf = io.StringIO()
    console = SafeConsole(file=buf, force_terminal=True, color_system="truecolor", width=200)
    table = Table("state", show_header=False, box=None)
    table.add_row(styled("green", "[red]pulled"))
    console.print(table)
    out = buf.getvalue()
    assert "[red]pulled" in out and "\x1b[32m" in out and "\x1b[31m" not in out
