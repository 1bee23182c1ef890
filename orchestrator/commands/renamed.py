"""Options renamed so that every command spells one thing one way: an old spelling still
works (a script's ``known-issues status --days 7``, with a warning naming the new one) and
``--help`` shows only the new. Each is a hidden option that hands its value to the new one
through click's default map, so the new option's own checks apply and it wins when both are
given."""

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
        param_decls=[f"renamed_{old.strip('-').replace('-', '_')}", old],  # its own name
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
        if command is None:  # a command line builds only the command it names
            continue
        by_name = {o: p for p in command.params for o in getattr(p, "opts", ())}
        command.params.extend(_alias(old, by_name[new]) for old, new in names.items())
    return root
