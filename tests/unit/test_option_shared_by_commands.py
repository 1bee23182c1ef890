"""An option object shared by several commands (as ``--db`` is, and as run, qualify and
bisect share their placement options) acts in the commands its declaration names: typed
in another, it is refused (exit 2) naming the command where it acts, before the command
runs; where it acts, the command runs. A real typer application, built as valorch's is."""

from __future__ import annotations

import pytest
import typer
from typer.main import get_command

from orchestrator.applies import Applies
from orchestrator.commands import flags
from orchestrator.commands.inert import guard
from orchestrator.errors import InputError

SHARED = flags.option(1, "--repeat", applies=Applies(commands=("run",)), help="Runs.")
ran: list[str] = []
app = typer.Typer()


@app.command("run")
def run_(repeat: int = SHARED) -> None:
    ran.append(f"run {repeat}")


@app.command("bisect")
def bisect_(repeat: int = SHARED) -> None:
    ran.append(f"bisect {repeat}")


GROUP = guard(get_command(app))


def _invoke(name: str, *argv: str) -> None:
    command = GROUP.commands[name]
    command.invoke(command.make_context(name, list(argv)))


def test_typed_in_a_command_it_does_not_act_in_it_is_refused_before_it_runs():
    with pytest.raises(InputError) as refused:
        _invoke("bisect", "--repeat", "2")
    assert refused.value.message == "valorch bisect: --repeat has no effect in valorch bisect"
    assert refused.value.hint == "drop --repeat, or use valorch run"
    assert refused.value.exit_code == 2
    assert "bisect 2" not in ran


def test_where_it_acts_or_is_left_at_its_default_the_command_runs():
    _invoke("run", "--repeat", "2")
    _invoke("bisect")
    assert ran[-2:] == ["run 2", "bisect 1"]
