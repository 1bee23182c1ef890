"""What every command shares: options, the console, the session at the edge."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.console import Console
from rich.errors import MarkupError, StyleError
from rich.markup import escape

from .. import encode
from ..errors import ValorchError
from ..words import cut
from . import flags

if TYPE_CHECKING:
    from ..applies import Applies
    from ..catalog.core import Catalog
    from ..services.outcome import Outcome, Tone

#: the regression rule's default threshold (spec.DEFAULT_THRESHOLD), here so that option
#: defaults need not import the rule at start-up
DEFAULT_THRESHOLD = 0.05


class SafeConsole(Console):
    """The terminal sink: every string printed (a message, a table cell, a job name, a
    workload's output) has its control characters made visible (encode.terminal), rich
    markup that does not parse is printed as text (never a MarkupError), and no hyperlink
    (OSC 8) is drawn from text; the only escape sequences are rich's own styles.
    A closed stdout (``valorch diff A B | head -2``) is not an error of the command: the
    rest of the output goes nowhere and the exit code stays the command's own."""

    def render_str(self, text: str, **kw: Any) -> Any:
        text = encode.terminal(text)
        try:
            rendered = super().render_str(text, **kw)
        except MarkupError:
            rendered = super().render_str(text, **{**kw, "markup": False})
        if "link" in str([s.style for s in rendered.spans]):
            rendered.spans = [s._replace(style=self._no_link(s.style)) for s in rendered.spans]
        return rendered

    def _no_link(self, style: Any) -> Any:
        try:
            return (
                self.get_style(style) if isinstance(style, str) else style
            ).clear_meta_and_links()
        except StyleError:
            return ""

    def print(self, *objects: Any, **kw: Any) -> None:
        """``Console.print``; where the output is not a terminal, a line longer than the width
        (one word that does not fit) is printed whole, never cropped."""
        if not self.is_terminal:
            kw.setdefault("crop", False)
        super().print(*objects, **kw)

    def on_broken_pipe(self) -> None:
        quiet_stdout()


def quiet_stdout() -> None:
    """After the reader closed stdout: what is still written goes to /dev/null."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())


# Results and progress for people go to stderr; stdout carries --json and rendered output.
err = SafeConsole(stderr=True, highlight=False, soft_wrap=True)
# output that is not a terminal is ``COLUMNS`` wide when that is a number of at least 20, else
# 120 (tables there wrap values, never cut them: tables.Table)
_COLUMNS = os.environ.get("COLUMNS", "")
_PIPED = int(_COLUMNS) if _COLUMNS.isdigit() and int(_COLUMNS) >= 20 else 120
out = SafeConsole(highlight=False, width=None if sys.stdout.isatty() else _PIPED)


def fit(text: str, limit: int, console: Console | None = None) -> str:
    """``text`` for a person at a terminal: at most ``limit`` characters, "…" where it was
    cut. Output that is not a terminal (a pipe, a file, ``less``) is never cut; identifiers
    a user may copy (digests, references) are not passed through here at all."""
    return cut(text, limit) if (console or out).is_terminal else text


DbOption = typer.Option(
    None,
    "--db",
    envvar="VALORCH_DB",
    help="SQLAlchemy URL or SQLite path [default: ./results/valorch.sqlite]",
)
JsonOption = typer.Option(
    False,
    "--json",
    help="Machine-readable JSON on stdout (the one spelling every command takes; where a "
    "command also has --format, --format json is the same).",
)
CatalogOption = typer.Option(
    None,
    "--catalog",
    envvar="VALORCH_CATALOG",
    help="Image catalog directory [default: ./images, else the project's]",
)
HostsOption = typer.Option(
    None,
    "--hosts",
    envvar="VALORCH_HOSTS",
    help="Host inventory YAML [default: this machine, as detected].",
)
ThresholdOption = typer.Option(
    DEFAULT_THRESHOLD,
    callback=flags.number("--threshold", 0, 10, lo_open=True),
    help="Timing ratio threshold (0.05 = 5 %), above 0, at most 10.",
)

SinceOption = typer.Option(
    None,
    "--since",
    callback=flags.date("--since"),
    help="Only runs started on or after this date (YYYY-MM-DD).",
)


def out_option(help: str = "Write here instead of stdout.") -> Any:
    """``--out/-o``: the file a command writes instead of stdout (flags.OUT_FILE checks it)."""
    return typer.Option(None, "--out", "-o", callback=flags.OUT_FILE, help=help)


OutOption = out_option()


# The waivers' windows, one spelling on every command that takes them (old spellings:
# commands/renamed.py): the runs readiness counts, and when a waiver can close.
def window_option(applies: Applies | None = None) -> Any:
    return flags.option(
        "7d",
        "--window",
        "-w",
        applies=applies,
        help="The candidate runs readiness counts: those of the last DURATION (90m, 36h, 7d, 2w).",
    )


WindowOption = window_option()


def close_options(applies: Applies | None = None) -> tuple[Any, Any]:
    """``--close-runs`` and ``--close-days``: when a waiver can close (each command that
    says so takes them; ``applies``: where they act, for a command where they may not)."""
    runs = flags.option(
        3,
        "--close-runs",
        min=1,
        max=10_000,
        applies=applies,
        help="A waiver can close when its checks passed in at least this many runs of every "
        "environment of its scope...",
    )
    days = flags.option(
        14,
        "--close-days",
        callback=flags.number("--close-days", 0, 3660, lo_open=True),
        applies=applies,
        help="... over the last this many days (default 14: two weeks).",
    )
    return runs, days


CloseRunsOption, CloseDaysOption = close_options()

NotifyOption = typer.Option(
    None,
    "--notify",
    help="Post the outcome: slack=URL or github=OWNER/REPO (token in "
    "GITHUB_TOKEN, commit in GITHUB_SHA); repeatable.",
)


def say(line: str) -> None:
    """A line as it is (a notification's log): no markup, no highlighting."""
    err.print(line, markup=False)


def local_images() -> frozenset[str]:
    """Catalogued local images (named by alias in repro commands, not by digest)."""
    try:
        return frozenset(i.alias for i in load_catalog(None).images if i.local)
    except ValorchError:
        return frozenset()


#: how each tone of an outcome's lines is shown (services/outcome.py)
TONES: dict[Tone, str] = {
    "pass": "bold green",
    "fail": "bold red",
    "error": "red",
    "warn": "yellow",
    "plain": "",
}


def end_with(outcome: Outcome) -> None:
    """Print what the service decided (``outcome.said``) and exit with its code."""
    for line in outcome.said:
        style = TONES[line.tone]
        err.print(f"[{style}]{escape(line.text)}[/{style}]" if style else escape(line.text))
    if outcome.code:
        raise typer.Exit(outcome.code)


def project_dir() -> Path:
    """The directory holding images/ and jobs/: the working directory when it has them,
    else the source tree valorch was installed from."""
    cwd = Path.cwd()
    if (cwd / "images").is_dir():
        return cwd
    return Path(__file__).resolve().parents[2]


def load_catalog(directory: Path | None) -> Catalog:
    from ..catalog.core import Catalog

    return Catalog.load(directory or project_dir() / "images")


def sessions(db: str | None) -> Any:
    """The session factory for ``--db`` (opened here, at the edge; imported when needed so
    that commands which touch no database do not load SQLAlchemy)."""
    from ..services.session import sessions as open_sessions

    return open_sessions(db)


def deferred_sessions(db: str | None) -> Any:
    """The session factory for ``--db``, opened at its first use (services/session.Deferred):
    a command that fails before it needs the store does not create one."""
    from ..services.session import Deferred

    return Deferred(db)


def print_json(obj: Any) -> None:
    sys.stdout.write(json.dumps(obj, indent=2, sort_keys=True, default=str) + "\n")


def write_output(text: str, path: Path | None) -> None:
    """Rendered output to a file (--out) or stdout; only the CLI writes files."""
    if path is None:
        try:
            sys.stdout.write(encode.terminal(text if text.endswith("\n") else text + "\n"))
            sys.stdout.flush()
        except BrokenPipeError:
            quiet_stdout()
        return
    from .. import outfile

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise outfile.error(path, exc) from None
    write_validated(text, path, None)


def write_validated(text: str, path: Path, validate: Callable[[Path], object] | None) -> None:
    """Replace ``path`` with ``text`` atomically (outfile.write): a temporary file beside it,
    ``validate(tmp)`` when given, then a rename. A failed validation leaves the original
    untouched; a link there is replaced, never written through."""
    from .. import outfile

    outfile.write(path, text.encode("utf-8"), validate)
    err.print(f"wrote {path}")
