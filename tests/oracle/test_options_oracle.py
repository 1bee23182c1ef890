"""Where each option acts, proven against an independent oracle.

``TABLE`` below is docs/input-validation.md's table ("Options that would have no effect")
written out by hand: for each command and option, the executors it acts with, the mode it
needs and the modes it does nothing in. It imports nothing of the declarations
(``flags.option(..., applies=...)``, orchestrator/applies.py). Hypothesis draws a command,
up to three of its options (with their values, ``--no-matrix`` and ``--format json``
among them), an executor and a set of modes (``--resume``, ``--json``, ``--cpu-only``,
``--job``, ``--readiness``, ``--level``); the command line is parsed by the real command
(click's own parser, sources and callbacks) and checked by the real check
(``commands/inert.check``). The refusal happens exactly when the oracle says a typed
option has no effect, and names one of those options. Each option's help ends with the
note the oracle's row reads as; every declared option is in the table and every row is
declared; and a sample of the refused command lines exits 2 through the console script.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from root_helpers import run_cli
from typer.main import get_command

from orchestrator.cli import app
from orchestrator.commands.inert import check, declared, guard
from orchestrator.errors import InputError

EVERY = frozenset({"host", "docker", "slurm", "kubernetes"})
HERE = frozenset({"host", "docker"})
RESUME = frozenset({"--resume"})


def row(executors=EVERY, needs=None, silenced_by=frozenset()):
    return (frozenset(executors), needs, frozenset(silenced_by))


RESUMED = ("--image", "--job", "--suite", "--check", "--deadline", "--timeout", "--attempts")
RESUMED += ("--cpu-only", "--repeat", "--executor")

#: (command, option) → (executors it acts with, the mode it needs, the modes it does nothing in)
TABLE = {
    **{("run", o): row(silenced_by=RESUME) for o in RESUMED},
    ("run", "--profiling-caps"): row(silenced_by={"--resume", "--cpu-only"}),
    ("run", "--matrix"): row(silenced_by={"--json"}),
    ("run", "--namespace"): row({"kubernetes"}, silenced_by=RESUME),
    ("run", "--rdma-resource"): row({"kubernetes"}, silenced_by={"--resume", "--cpu-only"}),
    ("run", "--partition"): row({"slurm"}, silenced_by=RESUME),
    ("run", "--slurm-spool"): row({"slurm"}, silenced_by=RESUME),
    ("run", "--retries"): row(HERE),
    ("run", "--hosts"): row(HERE),
    ("run", "--pull"): row({"docker"}, silenced_by=RESUME),
    ("run", "--ca"): row({"docker"}, silenced_by=RESUME),
    ("run", "--workload-root"): row(needs="--job", silenced_by=RESUME),
    ("qualify", "--window"): row(needs="--readiness"),
    ("qualify", "--close-runs"): row(needs="--known-issues"),
    ("qualify", "--close-days"): row(needs="--known-issues"),
    # the placement options run shares with qualify and bisect (commands/placing.py), which
    # have no --resume
    **{
        (c, o): r
        for c in ("qualify", "bisect")
        for o, r in {
            "--executor": row(),
            "--cpu-only": row(),
            "--repeat": row(),
            "--namespace": row({"kubernetes"}),
            "--rdma-resource": row({"kubernetes"}, silenced_by={"--cpu-only"}),
            "--partition": row({"slurm"}),
            "--slurm-spool": row({"slurm"}),
            "--retries": row(HERE),
            "--hosts": row(HERE),
            "--pull": row({"docker"}),
            "--ca": row({"docker"}),
        }.items()
    },
    ("hosts check", "--since"): row(needs="--level 1"),
    **{
        (c, "--format"): row(silenced_by={"--json"})
        for c in ("diff", "readiness", "inventory audit", "inventory diff", "inventory show")
    },
}
#: a value agrees with the mode that silences its option: it says what the mode does anyway
AGREES = {("--no-matrix",), ("--format", "json")}

#: what each command needs to parse, the modes it has, and a value for each option
BASE = {
    "qualify": ("--baseline", "v1"),
    "bisect": ("--check", "x"),
    "diff": ("a", "b"),
    "readiness": ("--job", "j", "--basis", "v1"),
    "inventory audit": ("--image", "host"),
    "inventory diff": ("a", "b"),
    "inventory show": ("1",),
}
MODES = {
    "run": ("--resume", "--json", "--cpu-only", "--job"),
    "qualify": ("--readiness", "--known-issues", "--cpu-only"),
    "bisect": ("--cpu-only",),
    "hosts check": ("--level 1", "--level 0"),
    **dict.fromkeys(("diff", "readiness", "inventory audit", "inventory diff"), ("--json",)),
    "inventory show": ("--json",),
}
MODE_ARGV = {
    "--resume": ("--resume", "0123abcd"),
    "--job": ("--job", "job.yaml"),
    "--readiness": ("--readiness", "v1"),
    "--known-issues": ("--known-issues", "known_issues.yaml"),
    "--level 1": ("--level", "1"),
    "--level 0": ("--level", "0"),
}
ONE_VALUE = {
    "--image": "host",
    "--job": "job.yaml",
    "--suite": "smoke",
    "--check": "env.*",
    "--deadline": "5",
    "--timeout": "5",
    "--attempts": "2",
    "--repeat": "2",
    "--namespace": "ci",
    "--rdma-resource": "rdma/hca",
    "--partition": "gpu",
    "--slurm-spool": "spool",
    "--retries": "5",
    "--hosts": "hosts.yaml",
    "--pull": "never",
    "--ca": "ca.crt",
    "--workload-root": ".",
    "--window": "3d",
    "--close-runs": "2",
    "--close-days": "7",
    "--since": "30",
}
VALUES = {
    "--matrix": [("--matrix",), ("--no-matrix",)],
    "--format": [("--format", "md"), ("--format", "json")],
    "--executor": [("--executor", e) for e in sorted(EVERY)],
    **{f: [(f,)] for f in ("--cpu-only", "--profiling-caps")},
    **{f: [(f, v)] for f, v in ONE_VALUE.items()},
}


def _commands(command, path=""):
    yield path, command
    for name, sub in getattr(command, "commands", {}).items():
        yield from _commands(sub, f"{path} {name}".strip())


COMMANDS = dict(_commands(guard(get_command(app))))


def _has_executor(path: str) -> bool:
    return any(p.name == "executor" for p in COMMANDS[path].params)


@st.composite
def invocations(draw):
    """(command, argv after it, {option: its argv}, modes, executor typed or None)."""
    path = draw(st.sampled_from(sorted({c for c, _ in TABLE})))
    modes = draw(st.sets(st.sampled_from(MODES[path]))) if path in MODES else set()
    options = [o for c, o in TABLE if c == path and o not in MODES.get(path, ())]
    flags = draw(st.lists(st.sampled_from(options), max_size=3))  # a mode is typed as one
    if {"--level 1", "--level 0"} <= modes:
        modes -= {"--level 0"}
    typed = {f: draw(st.sampled_from(VALUES[f])) for f in flags if f not in modes}
    if _has_executor(path) and "--executor" not in typed and draw(st.booleans()):
        typed["--executor"] = draw(st.sampled_from(VALUES["--executor"]))
    executor = typed["--executor"][1] if "--executor" in typed else None
    for mode in modes:  # a mode that is an option of its own is typed like one
        typed.setdefault(mode, MODE_ARGV.get(mode, (mode,)))
    argv = (*BASE.get(path, ()), *(a for m in modes for a in MODE_ARGV.get(m, (m,))))
    argv += tuple(a for f, given in typed.items() if f not in modes for a in given)
    return path, argv, typed, frozenset(modes), executor


def oracle(path, typed, modes, executor) -> set[str]:
    """The typed options the docs say have no effect here."""
    silenced = set()
    for flag, written in typed.items():
        if (path, flag) not in TABLE:
            continue
        executors, needs, silenced_by = TABLE[(path, flag)]
        moded = silenced_by & modes and written not in AGREES
        placed = _has_executor(path) and (executor or "docker") not in executors
        if moded or (needs and needs not in modes) or placed:
            silenced.add(flag)
    return silenced


def refusal(path: str, argv: tuple[str, ...]) -> str | None:
    """The flag the real check refuses on this command line (None when it runs on)."""
    command = COMMANDS[path]
    with pytest.MonkeyPatch.context() as env:
        env.delenv("VALORCH_HOSTS", raising=False)
        ctx = command.make_context(path.split()[-1], list(argv))
    try:
        check(ctx, path, declared(command))
    except InputError as exc:
        assert exc.exit_code == 2 and exc.hint.startswith("drop ")
        return re.match(rf"valorch {path}: (\S+) has no effect ", exc.message).group(1)
    return None


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(invocations())
def test_an_option_is_refused_exactly_where_the_docs_say_it_has_no_effect(case):
    path, argv, typed, modes, executor = case
    expected = oracle(path, typed, modes, executor)
    refused = refusal(path, argv)
    if expected:
        assert refused in expected, (argv, expected, refused)
    else:
        assert refused is None, (argv, refused)


def test_every_declared_option_is_in_the_table_and_every_row_declared():
    found = set()
    for path, command in COMMANDS.items():
        for name in declared(command):
            (param,) = [p for p in command.params if p.name == name]
            found.add((path, param.opts[0]))
    assert found == set(TABLE)


@pytest.mark.parametrize(("path", "flag"), sorted(TABLE))
def test_the_help_says_where_each_option_applies(path, flag):
    """The note that ends the option's help, read back, is the oracle's row."""
    (param,) = [p for p in COMMANDS[path].params if p.opts[0] == flag]
    note = re.search(r"\[([^\[\]]*)\]$", param.help)
    executors, needs, silenced_by = EVERY, None, frozenset()
    for part in filter(None, note.group(1).split("; ") if note else ()):
        if part.startswith("only with --executor "):
            executors = frozenset(part.removeprefix("only with --executor ").split(" or "))
        elif part.startswith("only with "):
            needs = part.removeprefix("only with ")
        else:
            silenced_by = frozenset(part.removeprefix("not with ").split(", "))
    expected, needed, silencing = TABLE[(path, flag)]
    if not _has_executor(path):  # a command that places nowhere else says nothing of it
        expected = EVERY
    assert (executors, needs, silenced_by) == (expected, needed, silencing)


@settings(max_examples=6, deadline=None)
@given(invocations())
def test_a_sample_is_refused_by_the_console_script_with_exit_2(tmp_path_factory, case):
    path, argv, typed, modes, executor = case
    expected = oracle(path, typed, modes, executor)
    assume(expected)
    cwd = tmp_path_factory.mktemp("cli")
    proc = run_cli(*path.split(), *argv, cwd=cwd, env={"VALORCH_DB": str(cwd / "s.sqlite")})
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    first = proc.stderr.strip().splitlines()[0]
    assert "has no effect" in first and any(f in first for f in expected), (argv, first)
    assert not (cwd / "s.sqlite").exists()
