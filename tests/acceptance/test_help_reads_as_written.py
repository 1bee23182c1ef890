"""Every command's --help, read through the real CLI: what a help string says is shown as
written (no bracketed text eaten, leaving "Host inventory YAML ."), switches take no
value placeholder, a repeatable value shows one value's type and says it repeats,
arguments are named as the docstrings name them (``diff BASE HEAD``), and every argument
and option says what it is."""

import re

from root_helpers import ROOT, run_cli
from typer.main import get_command

from orchestrator.cli import app

WIDE = {"COLUMNS": "200", "TERM": "dumb"}


def _commands(command, path=()):
    yield path, command
    for name, sub in getattr(command, "commands", {}).items():
        yield from _commands(sub, (*path, name))


def test_every_command_help_follows_the_rules():
    problems = []
    for path, command in _commands(get_command(app)):
        proc = run_cli(*path, "--help", env=WIDE)
        text = proc.stdout
        where = " ".join(("valorch", *path))
        if proc.returncode != 0 or "Traceback" in proc.stderr:
            problems.append(f"{where}: exit {proc.returncode} {proc.stderr[-300:]}")
        if "<bool>" in text:
            problems.append(f"{where}: a switch shows <bool>")
        if "<list[" in text:
            problems.append(f"{where}: a repeatable value shows a Python type, <list[...]>")
        usage = next((line for line in text.splitlines() if "Usage:" in line), "")
        if re.search(r"[{\[][a-z_]+[}\]]", usage.replace("[OPTIONS]", "")):
            problems.append(f"{where}: an argument in lower case, unlike the docstrings: {usage}")
        for line in text.splitlines():
            # a space before a full stop that ends a sentence (not "the characters '.'")
            if re.search(r"\w \.(\s+[A-Z\[(]|\s*│?\s*$)", line):
                problems.append(f"{where}: stray space before a full stop: {line.strip()}")
        for param in command.params:
            if not (param.help or "").strip():
                problems.append(f"{where}: {param.name} has no help text")
            # the [default: ...] a help string states is shown, not eaten as markup
            for said in re.findall(r"\[default: [^\]]+\]", param.help or ""):
                if said.split()[1] not in text:
                    problems.append(f"{where}: {param.name}'s {said} is not shown")
    assert not problems, "\n".join(problems)


def test_help_shows_bracketed_defaults_whole():
    text = run_cli("images", "check", "--help", env=WIDE).stdout
    assert "Aliases or selectors [default: every registry image]." in text
    assert "Image catalog directory [default: ./images, else the project's]" in text
    assert not re.search(r"--json\s+<", text)


def test_summaries_are_reflowed_not_broken_where_the_docstring_was():
    text = run_cli("results", "--help", env=WIDE).stdout
    assert "runs already here are left alone. The file is validated as a whole first" in text


def test_version_flag_and_command_agree():
    from orchestrator import __version__

    flag = run_cli("--version")
    assert flag.returncode == 0 and flag.stdout.strip() == f"valorch {__version__}"
    assert run_cli("version").stdout.strip() == __version__


def test_shell_completion_is_offered_and_completes(tmp_path):
    installed = run_cli(
        "--install-completion", "bash", env={"HOME": str(tmp_path), "SHELL": "/bin/bash"}
    )
    assert installed.returncode == 0, installed.stderr
    script = tmp_path / ".bash_completions" / "valorch.sh"
    assert "_VALORCH_COMPLETE=complete_bash" in script.read_text()
    assert str(script) in (tmp_path / ".bashrc").read_text()
    shown = run_cli("--show-completion", "bash")
    assert shown.returncode == 0 and "_VALORCH_COMPLETE=complete_bash" in shown.stdout
    assert "--install-completion" in run_cli("--help", env=WIDE).stdout
    done = run_cli(
        env={
            "_VALORCH_COMPLETE": "complete_bash",
            "COMP_WORDS": "valorch results li",
            "COMP_CWORD": "2",
        }
    )
    assert done.stdout.split() == ["list"]


def test_every_repeatable_option_says_it_repeats():
    from orchestrator.commands.helptext import tidy

    silent = [
        f"valorch {' '.join(path)} --{param.name}"
        for path, command in _commands(tidy(get_command(app)))
        for param in command.params
        if getattr(param, "multiple", False) and "repeatable" not in (param.help or "")
    ]
    assert not silent, silent


def test_arguments_and_repeatable_options_read_as_the_docstrings_write_them():
    text = run_cli("diff", "--help", env=WIDE).stdout
    assert "valorch diff [OPTIONS] BASE HEAD" in text  # as the docs write it, no braces
    assert re.search(r"--image\s+<str>\s+Only these image aliases \(repeatable\)", text)
    bisect = run_cli("bisect", "--help", env=WIDE).stdout
    assert "[IMAGES]..." in bisect and re.search(r"IMAGES\s+<str>\.\.\.", bisect)
    missing = run_cli("diff")
    assert missing.returncode == 2 and "BASE" in missing.stderr


def test_the_kubernetes_executor_says_it_is_experimental():
    """Never run against a live cluster: its help and its page say "experimental"."""
    for command in ("run", "qualify"):
        done = run_cli(command, "--help", env={"COLUMNS": "200"})
        assert done.returncode == 0
        text = " ".join(re.sub("[│╭╮╰╯─]", " ", done.stdout).split())  # the panel's frame out
        assert "kubernetes (experimental:" in text, command
    page = (ROOT / "docs" / "kubernetes.md").read_text(encoding="utf-8")
    assert page.startswith("# The Kubernetes executor (experimental)")
