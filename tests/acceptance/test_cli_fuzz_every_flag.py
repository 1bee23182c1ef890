"""Every command, every option, every environment variable valorch reads: fuzzed, not sampled.

The typer app (orchestrator/cli.py) is introspected; for each command hypothesis draws a
value for any subset of its options and arguments from the class of the option: strings
with control characters; huge, negative, NaN and zero numbers; paths to a directory, a
file, a missing parent, a place nothing may be written, a symlink, ``/``; URLs of every
scheme; plus the environment variables valorch reads. Each invocation must hold:

- the exit code is 0, 1, 2 or 3, and there is no traceback;
- a non-zero exit comes with a message;
- on exit 2 or 3, the store and every file the command could write (the whole working
  directory the command runs in, with its paths) are byte-identical to before.

Bounded for CI: a fixed seed (derandomize), a small example budget per command
(``VALORCH_FUZZ_EXAMPLES``, default 12); commands that would start containers or reach
a registry are fuzzed by test_cli_fuzz_container_commands.py (a subprocess each, against
the local test images and a local registry).
Run in process (typer's CliRunner) so that a few hundred invocations take a minute.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
from pathlib import Path

import pytest
import typer.main
from conftest import run_cli
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from typer._click.core import Context
from typer._click.types import FloatParamType, IntParamType
from typer.models import TyperPath
from typer.testing import CliRunner

from orchestrator.cli import app

EXAMPLES = int(os.environ.get("VALORCH_FUZZ_EXAMPLES", "12"))
#: start containers, pull from a registry, run probes or a scheduler: not in process here
#: (test_cli_fuzz_container_commands.py fuzzes them)
LEFT_OUT = {
    "run",
    "qualify",
    "bisect",
    "images pull",
    "images check",
    "hosts probe",
    "hosts check",
    "inventory audit",
    "inventory diff",
}
ENV = (
    "VALORCH_DB",
    "VALORCH_CATALOG",
    "VALORCH_HOSTS",
    "VALORCH_ORIGIN",
    "VALORCH_PUSH_TO",
    "VALORCH_REGISTRY_ENDPOINTS",
    "VALORCH_SPILL_DIR",
    "VALORCH_CERTS_D",
    "XDG_STATE_HOME",
    "GITHUB_TOKEN",
    "GITHUB_SHA",
    "GITHUB_API_URL",
    "VALORCH_GITHUB_TOKEN",
    "DOCKER_HOST",
)

CONTROLS = st.text(
    st.characters(codec=None, categories=None, exclude_characters="\x00"), max_size=12
)
NASTY = st.sampled_from(
    [
        "",
        " ",
        "-",
        "--",
        "\x1b[2J",
        "\x1b]52;c;aGk=\x07",
        "[/bold]",
        "[link=http://e]x",
        "../../../../etc/passwd",
        "*",
        "?",
        "[",
        "a" * 5000,
        "\u202e",
        "\ud800",
        "%s%n",
        "{0}",
        "'; DROP TABLE run; --",
        "latest",
        "latest:host",
        "latest:host:3",
        "v0.1",
        "HEAD~1",
    ]
)
TEXT = st.one_of(NASTY, CONTROLS)
NUMBERS = st.one_of(
    st.sampled_from(
        [
            "0",
            "-0",
            "-1",
            "nan",
            "NaN",
            "inf",
            "-inf",
            "1e309",
            "9" * 40,
            "9" * 5000,  # past Python's 4300-digit int() limit
            "1e-320",
            "0.5",
            "1",
            "3",
            "0x10",
            "1_000",
            "",
            "x",
        ]
    ),
    st.integers(-(10**12), 10**12).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
)
SCHEMES = [
    "sqlite:///{w}/new.sqlite",
    "sqlite:///{w}/dir",
    "sqlite:///",
    "sqlite:////",
    "sqlite://",
    "postgresql://u@127.0.0.1:1/db",
    "postgresql://u:pw@[::1/db",
    "postgresql://u@h:1x/db",
    "postgresql://u:p@h:1:2/db",
    "postgresql://u@host:/db",
    "postgres://u@127.0.0.1:1/db",
    "mysql://u@127.0.0.1:1/db",
    "oracle://x",
    "http://127.0.0.1:1/",
    "https://u:pw@127.0.0.1:1/x",
    "file:///etc/passwd",
    "ftp://127.0.0.1:1/x",
    "redis://127.0.0.1:1",
    "javascript:alert(1)",
    "data:text/plain,x",
    "ssh://127.0.0.1:1",
    "unix:///var/run/none.sock",
    "tcp://127.0.0.1:1",
    "{w}/store.sqlite",
]
PATHS = [
    "{w}/dir",
    "{w}/file.txt",
    "{w}/garbage.yaml",
    "{w}/missing/parent/x",
    "/proc/valorch-fuzz/x",
    "{w}/link-to-file",
    "{w}/dangling",
    "/",
    "{w}/export.json",
    "{w}/out.xml",
    "{w}",
    "{w}/dir/",
    "/dev/zero",  # endless: read by its kind, never to the end (test_file_kinds_every_file_option)
    "/dev/full",  # writes fail with ENOSPC
]


def commands():
    root = typer.main.get_command(app)
    found = []

    def walk(cmd, path):
        if hasattr(cmd, "list_commands"):
            ctx = Context(cmd)
            for name in cmd.list_commands(ctx):
                walk(cmd.get_command(ctx, name), (*path, name))
        else:
            found.append((" ".join(path), cmd))

    walk(root, ())
    return [(name, cmd) for name, cmd in found if name not in LEFT_OUT]


def _kind(param) -> str:
    """The class of values drawn for ``param``, from the click type typer made of its
    annotation (an int or float, a Path) and from its name."""
    name = param.name
    if getattr(param, "is_flag", False):
        return "flag"
    if isinstance(param.type, (IntParamType, FloatParamType)) or name in (
        "limit",
        "keep_days",
        "threshold",
        "deadline",
        "timeout",
        "attempts",
    ):
        return "number"
    if name in ("db", "to", "pushed_to") or "url" in name:
        return "url"
    if name == "notify":
        return "notify"
    if isinstance(param.type, TyperPath) or name in (
        "job",
        "catalog",
        "hosts",
        "file",
        "path",
        "ca",
        "known_issues",
        "tier_policy",
        "out",
        "out_path",
        "out_dir",
        "qualify_dir",
        "junit",
        "workload_root",
    ):
        return "path"
    return "text"


def _value(kind: str, w: Path, run_id: str):
    def fill(xs):
        return st.sampled_from([x.format(w=w) for x in xs])

    return {
        "number": NUMBERS,
        "url": st.one_of(fill(SCHEMES), TEXT),
        "path": st.one_of(fill(PATHS), TEXT),
        "notify": st.one_of(
            st.sampled_from(
                [
                    "slack=http://127.0.0.1:1/hook",
                    "slack=http://u:PW@127.0.0.1:1/x",
                    "slack=javascript:alert(1)",
                    "github=acme/stack",
                    "github=../x",
                    "teams=x",
                    "slack=",
                    "=",
                ]
            ),
            TEXT,
        ),
        "text": st.one_of(
            TEXT,
            st.sampled_from(
                [
                    run_id,
                    run_id[:8],
                    "latest",
                    "smoke",
                    "md",
                    "json",
                    "rst",
                    "html",
                    "term",
                    "junit",
                    "2026-01-01",
                    "7d",
                    "host",
                ]
            ),
        ),
    }[kind]


@pytest.fixture(scope="module")
def seed(tmp_path_factory):
    """A store with one real run (the host selftest) and its export."""
    where = tmp_path_factory.mktemp("seed")
    db = where / "store.sqlite"
    proc = run_cli(
        "run", "--image", "host", "--suite", "selftest", "--check", "selftest.pass", "--db", str(db)
    )
    assert proc.returncode == 0, proc.stderr
    run_id = sqlite3.connect(db).execute("SELECT id FROM run").fetchone()[0]
    assert (
        run_cli(
            "results", "export", run_id, "--out", str(where / "export.json"), "--db", str(db)
        ).returncode
        == 0
    )
    return where, run_id


def _workspace(seed, w: Path) -> None:
    shutil.copy(seed[0] / "store.sqlite", w / "store.sqlite")
    shutil.copy(seed[0] / "export.json", w / "export.json")
    (w / "dir").mkdir()
    (w / "file.txt").write_text("not what any command reads\n")
    (w / "garbage.yaml").write_text("{{ [ :\n\x1b[2J\n")
    (w / "link-to-file").symlink_to(w / "file.txt")
    (w / "dangling").symlink_to(w / "nowhere")


def _snapshot(w: Path) -> dict[str, bytes | str]:
    out: dict[str, bytes | str] = {}
    for p in sorted(w.rglob("*")):
        if p.name.endswith(
            ("-wal", "-shm", "-journal")
        ):  # SQLite's own side files come and go with a connection
            continue
        rel = str(p.relative_to(w))
        out[rel] = (
            ("link:" + os.readlink(p))
            if p.is_symlink()
            else ("dir" if p.is_dir() else p.read_bytes())
        )
    return out


STATS = {"examples": 0, "by_code": {}}


def _invoke(argv: list[str], env: dict[str, str], w: Path):
    """The app as the console script calls it (cli.App: a ValorchError becomes its message
    and exit code), with typer's CliRunner capturing the streams."""
    old = os.getcwd()
    os.chdir(w)
    code, exc = None, None
    try:
        with CliRunner().isolation(env=env) as (_out, _err, output):
            try:
                app(args=argv, prog_name="valorch")
            except SystemExit as stop:
                code = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
            except BaseException as raised:  # noqa: BLE001 - what a user would see as a traceback
                exc = raised
            text = output.getvalue().decode("utf-8", "replace")
    finally:
        os.chdir(old)
    return code, text, exc


@pytest.mark.parametrize("name,cmd", commands(), ids=[n for n, _ in commands()])
def test_every_flag_of_every_command_fails_cleanly(seed, tmp_path_factory, name, cmd):
    params = [p for p in cmd.params if p.name not in ("help",)]

    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        derandomize=True,
        database=None,
        phases=(
            Phase.explicit,
            Phase.generate,
        ),  # no shrinking: bounded time; the argv is in the message
        suppress_health_check=list(HealthCheck),
    )
    @given(st.data())
    def one(data):
        w = tmp_path_factory.mktemp("w")
        _workspace(seed, w)
        argv, positional = name.split(), []
        for p in params:
            kind = _kind(p)
            if not p.required and not data.draw(st.booleans(), label=f"use {p.name}"):
                continue
            if kind == "flag":
                argv.append(data.draw(st.sampled_from(list(p.opts) + list(p.secondary_opts or ()))))
                continue
            value = data.draw(_value(kind, w, seed[1]), label=p.name)
            if p.param_type_name == "option":
                argv += [p.opts[0], value]
            else:
                positional.append(value)
        argv += (["--"] if any(v.startswith("-") for v in positional) else []) + positional
        env = {"VALORCH_DB": str(w / "store.sqlite"), "XDG_STATE_HOME": str(w / "state")}
        for var in data.draw(st.lists(st.sampled_from(ENV), max_size=3, unique=True), label="env"):
            kind = (
                "url"
                if var in ("VALORCH_DB", "VALORCH_PUSH_TO", "GITHUB_API_URL", "DOCKER_HOST")
                else "path"
                if var
                in (
                    "VALORCH_CATALOG",
                    "VALORCH_HOSTS",
                    "VALORCH_SPILL_DIR",
                    "VALORCH_CERTS_D",
                    "XDG_STATE_HOME",
                )
                else "text"
            )
            # an environment holds no NUL, and Python decodes its bytes with surrogateescape:
            # the only lone surrogates it can hold are U+DC80-U+DCFF (one undecodable byte each)
            env[var] = "".join(
                c
                for c in data.draw(_value(kind, w, seed[1]), label=var)
                if c != "\x00" and ("\udc80" <= c <= "\udcff" or not "\ud800" <= c <= "\udfff")
            )
        before = _snapshot(w)
        code, output, exc = _invoke(argv, env, w)
        STATS["examples"] += 1
        STATS["by_code"][code] = STATS["by_code"].get(code, 0) + 1
        assert exc is None, f"valorch {argv!r}: traceback {type(exc).__name__}: {exc}"
        assert code in (0, 1, 2, 3), (argv, code, output[-2000:])
        assert "Traceback" not in output, (argv, output[-3000:])
        if code != 0:
            assert output.strip(), (argv, code)
        if code in (2, 3):
            after = _snapshot(w)
            changed = sorted(
                k for k in before.keys() | after.keys() if before.get(k) != after.get(k)
            )
            assert not changed, (argv, code, changed, output[-1500:])

    one()


def test_report_counts(capsys):
    """Prints how many invocations the class test ran, by exit code (a figure for a release's notes)."""
    with capsys.disabled():
        print(f"\nCLI fuzz: {STATS['examples']} invocations, by exit code {STATS['by_code']}")
