"""Options given where they have no effect, refused from what each option declares
(``flags.option(..., applies=...)``, applies.py), and each one's help told where it applies:
both set once for the whole command tree before a command runs.

An option typed on the command line that the situation ignores (``--partition`` without
``--executor slurm``, ``--suite`` with ``--resume``, ``--format md`` with ``--json``) is exit
2 naming the option, why it does nothing, and what to do: nothing is loaded, run, written or
stored. The same option set through its environment variable (``VALORCH_HOSTS``) is a
warning instead: a variable set for every command is documented to be tolerated where a
command does not use it. An option left at its default is never refused.
"""

from __future__ import annotations

import inspect
from typing import Any

from ..applies import Applies
from ..errors import InputError


def declared(command: Any) -> dict[str, Applies]:
    """Where each option of ``command`` acts, by parameter name (those that declare it)."""
    function = getattr(getattr(command, "callback", None), "__wrapped__", None)
    if function is None:  # a group, or a command typer did not build
        return {}
    return {
        name: p.default.applies
        for name, p in inspect.signature(function).parameters.items()
        if isinstance(getattr(p.default, "applies", None), Applies)
    }


def check(ctx: Any, path: str, options: dict[str, Applies]) -> None:
    """Refuse (exit 2) an option typed where it has no effect; warn of one set by variable."""
    for param in ctx.command.params:
        applies = options.get(param.name)
        source = getattr(ctx.get_parameter_source(param.name), "name", None)  # typer's click
        if applies is None or source not in ("COMMANDLINE", "ENVIRONMENT"):
            continue
        silenced = applies.silenced(ctx.params, ctx.params.get(param.name))
        if silenced is None:
            continue
        flag = "/".join(o for o in param.opts if o.startswith("--"))
        said = f"has no effect {silenced.what}" + (f" ({silenced.why})" if silenced.why else "")
        if source == "COMMANDLINE":
            raise InputError(f"valorch {path}: {flag} {said}", f"drop {flag}, or {silenced.fix}")
        from .common import err

        err.print(f"warning: {param.envvar} ({flag}) {said}; it is ignored", markup=False)


def guard(command: Any, path: str = "") -> Any:
    """``command`` and everything under it: each declared option's help ends with where it
    applies (one executor's options in that executor's panel), and the command refuses an
    option given where it has no effect before it runs."""
    options = declared(command)
    names = {p.name for p in command.params}
    for param in command.params:
        applies = options.get(param.name)
        if applies is not None:
            param.help = f"{param.help or ''} {applies.note(names)}".strip()
            if len(applies.executors) == 1:
                param.rich_help_panel = f"With --executor {applies.executors[0]}"
    if options:
        original = command.invoke

        def invoke(ctx: Any) -> Any:
            check(ctx, path, options)
            return original(ctx)

        command.invoke = invoke
    for name, sub in getattr(command, "commands", {}).items():
        guard(sub, f"{path} {name}".strip())
    return command
