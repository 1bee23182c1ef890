"""The valorch command line: parse, open the session, call, print. Thin.

Expected errors (``ValorchError``) become a message and an exit code
(2 bad input, 3 infrastructure), never a traceback.
"""

from __future__ import annotations

import sys

import typer

from . import __version__
from .commands import db as db_cmd
from .commands import hosts, images, matrix, results, suites
from .commands import site as site_cmd
from .commands import inventory as inventory_cmd
from .commands import jobs as jobs_cmd
from .commands import baseline as baseline_cmd
from .commands.bisect import bisect as bisect_cmd
from .commands.diff import diff as diff_cmd
from .commands.qualify import qualify
from .commands.run import run
from .errors import ValorchError


class App(typer.Typer):
    def __call__(self, *args, **kwargs):  # noqa: ANN002, ANN003
        try:
            return super().__call__(*args, **kwargs)
        except ValorchError as exc:
            from rich.markup import escape

            from .commands.common import err

            # escaped: a message may quote text in brackets, e.g. pip install 'valorch[postgres]'
            err.print(f"[bold red]error:[/bold red] {escape(exc.message)}", markup=True, highlight=False)
            if exc.hint:
                err.print(f"  [dim]hint:[/dim] {escape(exc.hint)}")
            sys.exit(exc.exit_code)


app = App(name="valorch", help="Containerized multi-backend validation orchestrator.",
          no_args_is_help=True, pretty_exceptions_enable=False, add_completion=False)
app.command("run")(run)
app.add_typer(images.app, name="images")
app.add_typer(suites.app, name="suites")
app.add_typer(results.app, name="results")
app.add_typer(matrix.app, name="matrix")
app.add_typer(hosts.app, name="hosts")
app.command("diff")(diff_cmd)
app.command("qualify")(qualify)
app.command("bisect")(bisect_cmd)
app.add_typer(baseline_cmd.app, name="baseline")
app.add_typer(inventory_cmd.app, name="inventory")
app.add_typer(jobs_cmd.app, name="jobs")
app.add_typer(db_cmd.app, name="db")
app.add_typer(site_cmd.app, name="site")


@app.command("version")
def version() -> None:
    """Print valorch's version."""
    print(__version__)
