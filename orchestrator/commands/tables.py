"""Terminal tables whose cells are text: what a cell holds is shown as it is.

rich reads ``[...]`` in a string as markup, so a workload's message, an engine's error or an
image's component value holding ``[red]`` or ``[link=…]`` would style the table, or link
from it. Here every ``str`` cell (and a ``str`` title) becomes a ``Text`` of exactly its
characters, its controls made visible (``encode.terminal``); only a ``Styled`` cell, which
valorch builds around a word of its own vocabulary (``styled``), is read as markup."""

from __future__ import annotations

import textwrap
from collections.abc import Iterator
from typing import Any

from rich.console import Console, ConsoleOptions, RenderableType
from rich.markup import escape
from rich.table import Column
from rich.table import Table as _RichTable
from rich.text import Text

from .. import encode

__all__ = ["Column", "Styled", "Table", "cell", "styled"]


class Styled(str):
    """Markup valorch wrote: a style around text it escaped (``styled``)."""

    __slots__ = ()


def styled(style: str, text: str) -> Styled:
    """``text`` shown in ``style`` (a rich style valorch chose); ``text`` stays literal."""
    return Styled(f"[{style}]{escape(text)}[/]")


def cell(value: Any) -> Any:
    """What a table shows for ``value``: a ``str`` as literal text, a ``Styled`` as markup,
    any other renderable as it is."""
    if isinstance(value, Styled):
        return str(value)
    if isinstance(value, str):
        return Text(encode.terminal(value))
    return value


class Table(_RichTable):
    """rich's table, with every ``str`` cell and title shown literally (``cell``)."""

    def __init__(self, *headers: Any, title: Any = None, uncut: bool = False, **kw: Any) -> None:
        """``uncut``: at a terminal too, never cut a value (as piped): a table whose values
        a user copies (aliases, references) wraps between words, else becomes records."""
        super().__init__(*headers, title=cell(title) if title is not None else None, **kw)
        self.uncut = uncut

    def add_row(self, *renderables: Any, **kw: Any) -> None:
        super().add_row(*(cell(r) for r in renderables), **kw)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> Iterator[Any]:
        """At a terminal, rich's table. Elsewhere (a pipe, a file) no value is ever cut: each
        column is at least as wide as its longest word, values wrap between words, and when
        even that does not fit the width, the table becomes one record per block."""
        if (console.is_terminal and not self.uncut) or not self.columns:
            yield from super().__rich_console__(console, options)
            return
        widths = _uncut_widths(self, console, options)
        if widths is None:
            yield from _records(self, options.max_width)
            return
        saved = [(c.width, c.overflow) for c in self.columns]
        for column, width in zip(self.columns, widths, strict=True):
            column.width = width - self._get_padding_width(column._index)
            column.overflow = "fold"
        try:
            yield from super().__rich_console__(console, options)
        finally:
            for column, (was, overflow) in zip(self.columns, saved, strict=True):
                column.width, column.overflow = was, overflow


def _uncut_widths(table: Table, console: Console, options: ConsoleOptions) -> list[int] | None:
    """Column widths (padding included) within the width where no column is narrower than
    its longest word: the widest columns give way first; None when the words do not fit."""
    wide = options.update_width(10**6)
    ranges = [table._measure_column(console, wide, c) for c in table.columns]
    room = options.max_width - table._extra_width
    lows = [r.minimum for r in ranges]
    if sum(lows) > room:
        return None
    widths = [r.maximum for r in ranges]
    while sum(widths) > room:
        slack = max(range(len(widths)), key=lambda i: widths[i] - lows[i])
        widths[slack] -= max(1, min(widths[slack] - lows[slack], sum(widths) - room) // 2)
    return widths


def _records(table: Table, width: int) -> Iterator[RenderableType]:
    """The table as one block per row: ``header: value`` lines wrapped between words at
    ``width`` (a longer word stays whole), a column without a header (a status mark) as its
    value alone, empty values left out, a blank line between."""
    if table.title is not None:
        yield table.title
    headers = [_plain(c.header) for c in table.columns]
    for index in range(table.row_count):
        for header, column in zip(headers, table.columns, strict=True):
            value = _plain(column._cells[index])
            if not value.strip():
                continue
            for line in textwrap.wrap(
                f"{header}: {value}" if header.strip() else value,
                width,
                subsequent_indent="  ",
                break_long_words=False,
                break_on_hyphens=False,
            ):
                yield Text(line, no_wrap=True, overflow="ignore")
        yield Text("")


def _plain(value: Any) -> str:
    """A header or cell as its characters: markup valorch wrote is read, a str is literal."""
    if isinstance(value, Text):
        return value.plain
    if isinstance(value, str):
        return Text.from_markup(value).plain
    return str(value)
