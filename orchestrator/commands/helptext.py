"""How every command's ``--help`` reads, set once for the whole command tree.

typer renders help text as rich markup, so a help string that says
``[default: ./images]`` lost its bracketed part and left "Image catalog directory ."
behind; every switch (``--json``, ``--help``) showed a ``<bool>`` placeholder as if it
took a value; and a command's summary broke wherever its docstring's lines did. ``tidy``
walks the click command tree once, before it runs: help text is escaped (shown as
written), each paragraph reflowed, and switches get no value placeholder.
"""

from __future__ import annotations

import copy
import inspect
from typing import Any

from rich.markup import escape
from typer.core import TyperArgument, TyperOption


def _one_value_shown(param: object, command: Any) -> None:
    """A repeatable option says so in its help (``(repeatable)``); a variadic argument's type ends
    in ``...`` (``IMAGES <str>...``). An argument's name is shown as the docstrings write it: ``diff
    BASE HEAD``, not typer's ``{base} {head}``, and ``IMAGES...`` for a variadic one."""
    if not isinstance(param, (TyperArgument, TyperOption)):
        return
    if isinstance(param, TyperArgument):
        if param.metavar is None:
            param.metavar = param.name.upper() if param.name else None
        shown_name = param.metavar or ""
        usage = shown_name if param.required else f"[{shown_name}]"
        usage += "..." if param.nargs != 1 and not usage.endswith("...") else ""
        # usage: NAME, [NAME], NAME... as the docs write it (typer's would be {NAME})
        setattr(param, "get_usage_pieces", lambda ctx, usage=usage: [usage])  # noqa: B010
        if param.nargs == -1:  # the argument's type column: one value's type, then "..."
            ctx = command.context_class(command)
            one = param.type.get_metavar(param=param, ctx=ctx) or f"<{param.type.name}>"
            many = copy.copy(param.type)  # this argument's own: the type object is shared
            setattr(many, "get_metavar", lambda param, ctx, shown=one + "...": shown)  # noqa: B010
            param.type = many
    if getattr(param, "multiple", False) and "repeatable" not in (param.help or ""):
        param.help = (param.help or "").rstrip() + " (repeatable)"


def tidy(command: Any) -> Any:
    """``command`` (a click command or group) and everything under it, help made literal."""
    for attr in ("help", "short_help", "epilog"):
        text = getattr(command, attr, None)
        if text:  # each paragraph one line: the terminal wraps it, not the docstring's breaks
            paragraphs = inspect.cleandoc(text).split("\n\n")
            setattr(command, attr, escape("\n\n".join(" ".join(p.split("\n")) for p in paragraphs)))
    params = list(getattr(command, "params", ()))
    if hasattr(command, "get_help_option"):  # made on demand, then kept
        params.append(command.get_help_option(command.context_class(command)))
    for param in params:
        if param is None:
            continue
        if getattr(param, "help", None):
            param.help = escape(param.help)
        if getattr(param, "is_flag", False) and getattr(param, "metavar", None) is None:
            param.metavar = ""  # a switch takes no value: no <bool> beside it
        _one_value_shown(param, command)
    for sub in getattr(command, "commands", {}).values():
        tidy(sub)
    return command
