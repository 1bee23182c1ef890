"""Terminal tables whose cells are text: what a cell holds is shown as it is.

rich reads ``[...]`` in a string as markup, so a workload's message, an engine's error or an
image's component value holding ``[red]`` or ``[link=…]`` would style the table, or link
from it. Here every ``str`` cell (and a ``str`` title) becomes a ``Text`` of exactly its
characters, its controls made visible (``encode.terminal``); only a ``Styled`` cell, which
valorch builds around a word of its own vocabulary (``styled``), is read as markup."""

from __future__ import annotations

from typing import Any

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

    def __init__(self, *headers: Any, title: Any = None, **kw: Any) -> None:
        super().__init__(*headers, title=cell(title) if title is not None else None, **kw)

    def add_row(self, *renderables: Any, **kw: Any) -> None:
        super().add_row(*(cell(r) for r in renderables), **kw)
