"""Options renamed so that every command spells one thing one way, with their old spellings
kept working: a script that says ``known-issues status --days 7`` goes on working (with a
warning naming the new spelling), and ``--help`` shows only the new one.

Each old spelling is a hidden option that hands its value to the new option through click's
default map, so the new option's own type and checks apply to it, and the new spelling wins
when both are given. The table is the one place a rename is written.
"""

from __future__ import annotations

from typing import Any

from typer.core import TyperOption

#: (command path) → {old spelling: new spelling}
RENAMED: dict[tuple[str, ...], dict[str, str]] = {
    ("known-issues", "status"): {"--runs": "--close-runs", "--days": "--close-days"},
    ("qualify",): {"--readiness-window": "--window"},
}


def _alias(old: str, new: Any) -> TyperOption:
    def hand_over(ctx: Any, _param: Any, value: Any) -> None:
        if value is None:
            return
        from .common import err

        err.print(f"warning: {old} is now {new.opts[0]} (the old spelling still works)")
        ctx.default_map = {**(ctx.default_map or {}), str(new.name): value}

    return TyperOption(
        param_decls=[old],
        hidden=True,
        expose_value=False,
        is_eager=True,
        callback=hand_over,
        type=str,
    )


def renamed(root: Any) -> Any:
    """``root`` (the click group) with the old spellings of RENAMED added, hidden."""
    for path, names in RENAMED.items():
        command = root
        for word in path:
            command = getattr(command, "commands", {}).get(word)
        if command is None or getattr(command, "_valorch_renamed", False):
            continue
        command._valorch_renamed = True
        by_name = {o: p for p in command.params for o in getattr(p, "opts", ())}
        command.params.extend(_alias(old, by_name[new]) for old, new in names.items())
    return root
