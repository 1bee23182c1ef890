"""Every option of every command that names a file or directory the command writes
(--out, --out-dir, --junit) is checked when it is parsed (commands/flags.py), so a path
that cannot be written is exit 2 before any work starts."""

import inspect

import typer.models

from orchestrator.cli import app
from orchestrator.commands import flags

OUTPUT_NAMES = {"--out", "--out-dir", "--junit"}
CHECKS = (flags.OUT_FILE, flags.JUNIT_FILE, flags.OUT_DIR, flags.OUT_SITE_DIR)


def _functions(typer_app, path=()):
    for info in typer_app.registered_commands:
        yield " ".join((*path, info.name or info.callback.__name__)), info.callback
    for group in typer_app.registered_groups:
        yield from _functions(group.typer_instance, (*path, group.name or ""))


def test_every_output_option_is_checked_when_parsed():
    seen = []
    for name, function in _functions(app):
        for param in inspect.signature(function).parameters.values():
            option = param.default
            if isinstance(option, typer.models.OptionInfo) and OUTPUT_NAMES & set(
                option.param_decls
            ):
                seen.append(name)
                assert any(option.callback is c for c in CHECKS), (
                    f"valorch {name} {option.param_decls}: not checked when parsed"
                )
    assert len(seen) >= 10, seen
