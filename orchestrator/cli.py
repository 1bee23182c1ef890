"""The valorch command line: parse, open the session, call, print. Thin.

Expected errors (``ValorchError``) become a message and an exit code
(2 bad input, 3 infrastructure), never a traceback. Start-up is a goal (≤ 0.25 s for a
read-only command), so ``main`` imports and builds only the command the line names, turns
pydantic's plugin scan off, collects garbage rarely and freezes what the imports made
(figures: docs/benchmarks.md, "Why the code is shaped for speed").
"""

from __future__ import annotations

import errno
import gc
import importlib
import os
import sys
from collections.abc import Callable
from typing import Any, NoReturn

import typer

from . import __version__, encode, library_logs, satellites
from .errors import InfrastructureError, InputError, ValorchError


class App(typer.Typer):
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        from typer.main import get_command

        from .commands.helptext import tidy
        from .commands.inert import guard
        from .commands.renamed import renamed

        try:
            try:
                _check_encoding(kwargs.get("args") or sys.argv[1:])
                return tidy(guard(renamed(get_command(self))))(*args, **kwargs)
            except OSError as exc:
                if isinstance(exc, BrokenPipeError):
                    raise
                raise _os_error(exc) from None
            # a database error no store function named: exit 3, not a traceback
            except Exception as exc:
                sa = sys.modules.get("sqlalchemy.exc")
                if sa is None or not isinstance(exc, sa.SQLAlchemyError):
                    raise
                why = str(getattr(exc, "orig", None) or exc).splitlines()[0][:300]
                raise InfrastructureError(
                    f"the results database failed: {why}",
                    "valorch db check --db URL diagnoses the store",
                ) from None
        except SystemExit as exc:
            if exc.code in (2, 3):
                _undo_created()
            raise
        except ValorchError as exc:
            _undo_created()
            from rich.markup import escape

            from .commands.common import err

            # escaped: a message may quote text in brackets, e.g. pip install 'valorch[postgres]'
            err.print(f"[bold red]error:[/bold red] {escape(exc.message)}")
            if exc.hint:
                err.print(f"  [dim]hint:[/dim] {escape(exc.hint)}")
            sys.exit(exc.exit_code)


def _check_encoding(argv: list[str]) -> None:
    """An argument or a VALORCH_/GITHUB_ variable that is not valid UTF-8 (Python decodes its
    bytes to lone surrogates) is bad input, named, before it meets a file name or the store."""

    def bad(text: str) -> bool:
        return any("\ud800" <= ch <= "\udfff" for ch in text)

    for i, arg in enumerate(argv, 1):
        if bad(arg):
            raise InputError(
                f"argument {i} ('{arg[:60]}') is not valid UTF-8",
                "pass names, paths and URLs as UTF-8 text",
            )
    for name, value in os.environ.items():
        if name.startswith(("VALORCH_", "GITHUB_")) and bad(value):
            raise InputError(
                f"environment variable {name} is not valid UTF-8", f"set {name} to UTF-8 text"
            )


def _os_error(exc: OSError) -> ValorchError:
    """An OSError no command turned into a message (a path too long, a loop of symlinks, a
    directory where a file was expected, …): exit 2 naming the path, or 3 when the machine
    itself failed (a full disk, an I/O error), never a traceback."""
    where = f" {encode.one_line(str(exc.filename))[:200]}" if exc.filename else ""
    if exc.errno in (errno.ENOSPC, errno.EIO, errno.EDQUOT):
        return InfrastructureError(
            f"cannot write{where}: {exc.strerror}", "free space or fix the device, then retry"
        )
    return InputError(
        f"cannot use{where}: {exc.strerror or exc}",
        "check the path you passed (it must exist where read, be writable where written, "
        "and be a file or a directory as the option says)",
    )


def _undo_created() -> None:
    """A failed command leaves no empty store it created (store/db.py: undo_created)."""
    store_db = sys.modules.get("orchestrator.store.db")
    if store_db is not None:
        store_db.undo_created()


# The core's commands, in the order --help lists them: (name on the command line,
# "module:attribute" under orchestrator.commands), a typer app (a command group) or a
# command function. A command line imports and builds only the command it names
# (``_app_for``); --help, no command, a name that is none of these, and shell completion
# build every one.
COMMANDS: tuple[tuple[str, str], ...] = (
    ("run", "run:run"),
    ("images", "images:app"),
    ("suites", "suites:app"),
    ("results", "results:app"),
    ("matrix", "matrix:app"),
    ("hosts", "hosts:app"),
    ("diff", "diff:diff"),
    ("qualify", "qualify:qualify"),
    ("readiness", "readiness:readiness"),
    ("accept", "accept:app"),
    ("known-issues", "known_issues:app"),
    ("bisect", "bisect:bisect"),
    ("baseline", "baseline:app"),
    ("inventory", "inventory:app"),
    ("jobs", "jobs:app"),
    ("db", "db:app"),
)

SHELLS = ("bash", "zsh", "fish", "powershell", "pwsh")


def _completion(install: bool) -> Any:
    """--show-completion / --install-completion [SHELL]: the named shell's script (bash,
    zsh, fish, powershell, pwsh), or the current shell's when none is named."""
    flag = "--install-completion" if install else "--show-completion"
    does = "Install completion for" if install else "Print the completion script of"

    def act(value: str | None) -> None:
        if value is None:
            return
        from typer._completion_shared import _get_shell_name, get_completion_script
        from typer._completion_shared import install as install_script

        shell = _get_shell_name() if value == "" else value
        if shell not in SHELLS:
            raise typer.BadParameter(
                f"{value or shell!r} is not a shell valorch completes: one of {', '.join(SHELLS)}",
                param_hint=f"'{flag}'",
            )
        if install:
            shell, path = install_script(shell=shell, prog_name="valorch")
            print(f"{shell} completion installed in {path}; restart the shell")
        else:
            print(
                get_completion_script(
                    prog_name="valorch", complete_var="_VALORCH_COMPLETE", shell=shell
                )
            )
        raise typer.Exit()

    return typer.Option(
        None,
        flag,
        is_eager=True,
        expose_value=False,
        metavar=f"[{'|'.join(SHELLS)}]",
        callback=act,
        help=f"{does} the shell named [default: the current shell].",
    )


def _print_version(value: bool) -> None:
    if value:
        print(f"valorch {__version__}")
        raise typer.Exit()


def _root(
    _version: bool = typer.Option(
        False,
        "--version",
        is_eager=True,
        callback=_print_version,
        help="Print valorch's version and exit.",
    ),
    _install: str = _completion(install=True),
    _show: str = _completion(install=False),
) -> None:
    """Containerized multi-backend validation orchestrator."""


def version() -> None:
    """Print valorch's version."""
    print(__version__)


def _every_command() -> tuple[tuple[str, Callable[[], Any]], ...]:
    """(name, loader) of every command in --help's order: the core's, the satellites' (from
    their registry, orchestrator/satellites.py: their command modules import nothing of
    their extra, so --help lists them either way), then ``version``."""
    core = tuple(
        (name, lambda ref=ref: _attribute("orchestrator.commands", ref)) for name, ref in COMMANDS
    )
    ext = tuple(
        (name, lambda s=s.name, ref=ref: _attribute(f"orchestrator.ext.{s}", ref))
        for s in satellites.SATELLITES
        for name, ref in s.commands
    )
    return (*core, *ext, ("version", lambda: version))


def _attribute(package: str, ref: str) -> Any:
    module, _, attribute = ref.partition(":")
    return getattr(importlib.import_module(f"{package}.{module}"), attribute)


def build(names: frozenset[str] | None = None) -> App:
    """The CLI with the commands named (every one when None), each module imported here."""
    made = App(
        name="valorch",
        help="Containerized multi-backend validation orchestrator.",
        no_args_is_help=True,
        pretty_exceptions_enable=False,
        add_completion=False,  # ours above: typer's ignores a shell named after the flag
    )
    made.callback()(_root)
    for name, load in _every_command():
        if names is not None and name not in names:
            continue
        command = load()
        if isinstance(command, typer.Typer):
            made.add_typer(command, name=name)
        else:
            made.command(name)(command)
    return made


def _app_for(argv: list[str]) -> App:
    """The CLI a command line needs: only the command it names, or none when it starts with
    a root option other than --help (--version and the completion options act and exit
    before any command); every command otherwise (--help or nothing lists them all, and a
    misspelt name gets click's own message and suggestions)."""
    if "_VALORCH_COMPLETE" in os.environ or not argv or argv[0] in ("--help", "-h"):
        return build()
    first = argv[0]
    if first.startswith("-"):
        return build(frozenset())
    known = {name for name, _ in _every_command()}
    return build(frozenset({first})) if first in known else build()


def __getattr__(name: str) -> Any:
    """``orchestrator.cli.app``: the whole CLI, built once on first use (tests and scripts
    that introspect or call it)."""
    if name == "app":
        whole = globals()["app"] = build()
        return whole
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def main() -> NoReturn:
    """The console script (``[project.scripts]``), minus two costs of a short command that are
    not its work (docs/benchmarks.md, "Why the code is shaped for speed"): the cyclic collector
    runs every 50,000 allocations, not 700, while the imports build what is not garbage, and
    ``gc.freeze`` keeps the final collections at exit from walking every object they made. The
    exit itself is Python's own (exit handlers, engines disposed, streams flushed)."""
    gc.set_threshold(50_000, 10, 10)
    _usable_streams()
    # no third-party code joins the process through pydantic's plugin entry points (which
    # would see every spec and result validated, and cost a metadata read per installed
    # distribution): its documented switch, unless the user set it (docs/architecture.md,
    # "No third-party code by entry point"); local workloads never see it (executors/hostenv)
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    library_logs.install()
    # ``--show-completion`` with no shell named means the current shell: the option takes a
    # value (typer's options cannot make it optional), so an empty one is added
    argv, shows = sys.argv, ("--show-completion", "--install-completion")
    if len(argv) >= 2 and argv[1] in shows and (len(argv) == 2 or argv[2].startswith("-")):
        argv.insert(2, "")
    if "_VALORCH_COMPLETE" in os.environ:  # a shell asks for completions: typer's classes
        from typer._completion_classes import completion_init

        completion_init()
    try:
        _app_for(sys.argv[1:])()
    finally:
        _flush_streams()
        gc.freeze()
    sys.exit(0)


def _usable_streams() -> None:
    """The standard streams as the environment left them, made usable once for every command:

    - a stream the caller closed (``valorch results list >&-``) is opened on /dev/null, so
      that what would go there goes nowhere (quietly, the exit code the command's own) and
      the next file valorch opens cannot take its descriptor (a store opened as fd 1 would
      receive the output);
    - a stream whose encoding cannot show a character (``PYTHONIOENCODING=ascii``, a C
      locale) shows ``?`` for it instead of failing with UnicodeEncodeError."""
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            null = os.open(os.devnull, os.O_RDWR)
            if null != fd:
                os.dup2(null, fd)
                os.close(null)
    for name, fd in (("stdin", 0), ("stdout", 1), ("stderr", 2)):
        if getattr(sys, name) is None:  # Python found the descriptor closed at start-up
            mode = "r" if fd == 0 else "w"
            setattr(sys, name, open(fd, mode, encoding="utf-8", errors="replace", closefd=False))  # noqa: SIM115 - the process's own stream, open until exit
    for stream in (sys.stdout, sys.stderr):
        if getattr(stream, "errors", None) == "strict" and hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="replace")


def _flush_streams() -> None:
    """`valorch … | head` closed the pipe: not a verdict, the exit code stays the command's
    own (docs/design.md, "CLI conventions"), and the interpreter's own flush at exit writes
    nowhere instead of failing."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BrokenPipeError:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, stream.fileno())
        except ValueError:  # a closed stream: nothing left to write
            pass
