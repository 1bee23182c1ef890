"""An option whose values are an enum's (``--format``, ``--executor``) and whose callback
checks the value when parsed reaches its command as the member the command line named.
typer converts what such a callback returns to the enum once more, from its ``str()``: a
callback that handed back the member it was given (``str(AuditFormat.md)`` is
``'AuditFormat.md'``, no member's value) left the command ``None``, and
``inventory show RUN --format md`` printed the terminal table instead."""

from __future__ import annotations

import pytest
import typer.main
from typer._click.core import Context
from typer._types import TyperChoice

from orchestrator.cli import app
from orchestrator.errors import InputError


def _checked_choices() -> list[tuple[str, object, object]]:
    found = []

    def walk(command: object, path: str) -> None:
        for param in getattr(command, "params", ()):
            if isinstance(param.type, TyperChoice) and param.callback is not None:
                found.append((f"{path} {param.opts[0]}".strip(), command, param))
        for name, sub in getattr(command, "commands", {}).items():
            walk(sub, f"{path} {name}")

    walk(typer.main.get_command(app), "")
    return found


CHECKED = _checked_choices()


def test_the_checked_choices_are_found():
    assert {"run --executor", "qualify --executor", "inventory show --format"} <= {
        name for name, _, _ in CHECKED
    }


@pytest.mark.parametrize(("name", "command", "param"), CHECKED, ids=[c[0] for c in CHECKED])
def test_a_checked_choice_converts_back_to_the_member_named(name, command, param):
    ctx = Context(command)
    for choice in param.type.choices:
        try:
            returned = param.callback(ctx, param, choice)
        except InputError:  # a satellite's choice without its extra: refused when parsed
            continue
        assert str(returned) == choice, f"{name} {choice}: the command would get None"
