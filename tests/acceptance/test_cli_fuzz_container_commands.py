"""The CLI fuzz over the commands that start containers or reach a registry.

test_cli_fuzz_every_flag.py fuzzes every other command in process; these (``run``,
``qualify``, ``bisect``, ``images check``, ``images pull``, ``hosts check``,
``hosts probe``, ``inventory audit``, ``inventory diff``, and ``attest``/``verify``
against a registry) are fuzzed here with the same strategies, plus values that reach
real work: the local test images (``valorch/test:*``, the catalog's ``local-test``
family), the ``local-test`` job, and an image pushed to a local registry on 127.0.0.1
(tests/integration/registry_support.py, TLS and basic auth).

Each invocation runs the real console script in a subprocess (a hung container or
registry call fails the example at its timeout instead of holding the suite) and must
end with exit 0, 1, 2 or 3, no traceback, a message for a non-zero code, and on 2 or 3
the store and the working directory unchanged. Bounded: a fixed seed and
``VALORCH_FUZZ_CONTAINER_EXAMPLES`` (default 4) examples per command; a drawn ``run``
or ``bisect`` without ``--suite``/``--check`` runs only ``selftest.pass``.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
import typer.main
from conftest import ROOT, run_cli
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from test_cli_fuzz_every_flag import ENV, _kind, _snapshot, _value, _workspace, seed
from typer._click.core import Context

from orchestrator.cli import app

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "integration"))
from registry_support import SMALL, registry_basic  # noqa: F401 (fixture, requested by name)

pytestmark = pytest.mark.docker
_ = seed  # the seeded store fixture, requested by name

EXAMPLES = int(os.environ.get("VALORCH_FUZZ_CONTAINER_EXAMPLES", "4"))
COMMANDS = (
    "run",
    "qualify",
    "bisect",
    "images check",
    "images pull",
    "hosts check",
    "hosts probe",
    "inventory audit",
    "inventory diff",
    "attest",
    "verify",
)
LOCAL = ("valorch/test:pip-torch", "valorch/test:debian-torch")
ALIASES = ("host", "cpu_debian12_py3.11_pytorch_2.13", "cpu_debian12_py3.11_pytorch_1.13")
#: keeps a drawn run short: the selftest's passing check, unless the draw names others
QUICK = ("--suite", "selftest", "--check", "selftest.pass")


def _commands():
    root = typer.main.get_command(app)
    out = []
    for name in COMMANDS:
        cmd, ctx = root, Context(root)
        for part in name.split():
            cmd = cmd.get_command(ctx, part)
            ctx = Context(cmd)
        out.append((name, cmd))
    return out


@pytest.fixture(scope="module")
def world(seed, registry_basic, tmp_path_factory):  # noqa: F811 (the fixtures imported above)
    """The small local image pushed to the local registry and run once (selftest.pass)
    into a copy of the seeded store, and a signing key: a working argv for every command."""
    for image in LOCAL:
        if subprocess.run(["docker", "image", "inspect", image], capture_output=True).returncode:
            pytest.fail(f"test image {image} missing: run make test-images")
    where = tmp_path_factory.mktemp("world")
    shutil.copy(seed[0] / "store.sqlite", where / "store.sqlite")
    shutil.copy(seed[0] / "export.json", where / "export.json")
    registry_basic.push(SMALL, "fuzz/small:v1")
    ref = f"{registry_basic.host}/fuzz/small:v1"
    env = {**registry_basic.env(), "VALORCH_DB": str(where / "store.sqlite")}
    done = run_cli("run", "--image", ref, *QUICK, "--json", env=env)
    assert done.returncode == 0, done.stderr
    run_id = (
        sqlite3.connect(where / "store.sqlite")
        .execute("SELECT id FROM run WHERE id != ?", (seed[1],))
        .fetchone()[0]
    )
    key, pub = where / "k.pem", where / "pub.pem"
    subprocess.run(["openssl", "genpkey", "-algorithm", "ed25519", "-out", str(key)], check=True)
    subprocess.run(["openssl", "pkey", "-in", str(key), "-pubout", "-out", str(pub)], check=True)
    return World(where, seed[1], run_id, ref, registry_basic, key, pub)


@dataclass(frozen=True)
class World:
    dir: Path
    host_run: str
    ref_run: str
    ref: str
    registry: object
    key: Path
    pub: Path

    def working(self, name: str) -> list[str]:
        """An argv of ``name`` that does real work (exit 0 or 1) before any option is drawn."""
        img = "cpu_debian12_py3.11_pytorch_2.13"
        return {
            "run": ["--image", self.ref, *QUICK],
            "qualify": ["--baseline", self.host_run, "--image", "host"],
            "bisect": ["--check", "selftest.pass", "--images", "host", "--images", img],
            "images check": [self.ref],
            "images pull": [self.ref],
            "hosts check": ["--image", img],
            "hosts probe": [],
            "inventory audit": ["--image", img],
            "inventory diff": [img, "cpu_debian12_py3.11_pytorch_1.13"],
            "attest": ["--run", self.ref_run, "--key", str(self.key), "--push"],
            "verify": ["--image", self.ref, "--key", str(self.pub)],
        }[name]


def _real(kind: str, name: str, w: Path, ref: str, ca: Path):
    """Values that get past parsing to real work, drawn beside the hostile ones."""
    if name in ("image", "images", "names", "a", "b", "probe_image"):
        return st.sampled_from([*LOCAL, *ALIASES, ref, f"{ref.rsplit(':', 1)[0]}:gone"])
    if name == "job":
        return st.sampled_from([str(ROOT / "jobs" / "local-test.yaml"), str(w / "job.yaml")])
    if name == "catalog":
        return st.just(str(ROOT / "images"))
    if name == "ca":
        return st.just(str(ca))
    if name == "executor":
        return st.sampled_from(["docker", "host", "slurm", "kubernetes"])
    if name == "pull":
        return st.sampled_from(["missing", "never", "always"])
    if name == "level":
        return st.sampled_from(["0", "1"])
    return st.nothing()


STATS: dict[str, dict[int, int]] = {}


def _after_real_runs(output: str) -> bool:
    """bisect's "the check passes in every image" is exit 2 after its runs were stored (real
    evidence, kept): the one exit 2 that is not refused before anything ran."""
    return "there is no first bad image to find" in output


def _encodable(text: str) -> str:
    return "".join(c for c in text if c != "\x00" and not "\ud800" <= c < "\udc80")


@pytest.mark.parametrize("name,cmd", _commands(), ids=list(COMMANDS))
def test_container_and_registry_commands_fail_cleanly(
    world,
    tmp_path_factory,
    name,
    cmd,
):
    ref, reg = world.ref, world.registry
    seed = (world.dir, world.host_run)
    params = [p for p in cmd.params if p.name != "help"]

    # the working argv alone reaches real work: a container, a registry, the engine
    w0 = tmp_path_factory.mktemp("w")
    _workspace(seed, w0)
    base = run_cli(
        *name.split(),
        *world.working(name),
        cwd=w0,
        env={**reg.env(), "VALORCH_DB": str(w0 / "store.sqlite")},
        timeout=300,
    )
    assert base.returncode in (0, 1) or _after_real_runs(base.stderr), (name, base.stderr[-2000:])
    assert "Traceback" not in base.stdout + base.stderr

    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        derandomize=True,
        database=None,
        phases=(Phase.explicit, Phase.generate),
        suppress_health_check=list(HealthCheck),
    )
    @given(st.data())
    def one(data):
        w = tmp_path_factory.mktemp("w")
        _workspace(seed, w)
        (w / "job.yaml").write_text(
            "name: fuzz\nimages: [cpu_debian12_py3.11_pytorch_2.13]\n"
            "suites:\n  - name: selftest\n    checks: [selftest.pass]\n"
        )
        argv, positional, used = name.split(), [], set()
        working = data.draw(st.booleans(), label="from a working argv")
        if working:
            start = world.working(name)
            argv += start
            used |= {p.name for p in params if set(p.opts) & set(start)}
            positional_given = bool(start) and not start[0].startswith("-")
        else:
            positional_given = False
        for p in params:
            if p.name in used or (positional_given and p.param_type_name == "argument"):
                continue
            kind = _kind(p)
            # from a working argv, fewer hostile extras: most examples then reach real work
            odds = [True, False, False] if working else [True, False]
            if not p.required and not data.draw(st.sampled_from(odds), label=f"use {p.name}"):
                continue
            used.add(p.name)
            if kind == "flag":
                argv.append(data.draw(st.sampled_from(list(p.opts) + list(p.secondary_opts or ()))))
                continue
            value = data.draw(
                st.one_of(_real(kind, p.name, w, ref, reg.ca), _value(kind, w, seed[1])),
                label=p.name,
            )
            if p.param_type_name == "option":
                argv += [p.opts[0], value]
            else:
                positional.append(value)
        if name in ("run", "bisect") and not used & {"suite", "check"}:
            argv += list(QUICK) if name == "run" else ["--check", "selftest.pass"]
        argv += (["--"] if any(v.startswith("-") for v in positional) else []) + positional
        env = {
            **reg.env(),
            "VALORCH_DB": str(w / "store.sqlite"),
            "XDG_STATE_HOME": str(w / "state"),
        }
        for var in data.draw(st.lists(st.sampled_from(ENV), max_size=2, unique=True), label="env"):
            env[var] = _encodable(data.draw(_value("text", w, seed[1]), label=var))
        # an argv or environment holds no NUL and (decoded by Python) no lone surrogate below U+DC80
        argv = [_encodable(a) for a in argv]
        before = _snapshot(w)
        try:
            proc = run_cli(*argv, cwd=w, env=env, timeout=300)
        except subprocess.TimeoutExpired:
            pytest.fail(f"valorch {argv!r} did not end within 300 s")
        output = proc.stdout + proc.stderr
        codes = STATS.setdefault(name, {})
        codes[proc.returncode] = codes.get(proc.returncode, 0) + 1
        assert proc.returncode in (0, 1, 2, 3), (argv, proc.returncode, output[-2000:])
        assert "Traceback" not in output, (argv, output[-3000:])
        if proc.returncode != 0:
            assert proc.stderr.strip() or proc.stdout.strip(), (argv, proc.returncode)
        if proc.returncode in (2, 3) and not _after_real_runs(output):
            after = _snapshot(w)
            changed = sorted(
                k for k in before.keys() | after.keys() if before.get(k) != after.get(k)
            )
            assert not changed, (argv, proc.returncode, changed, output[-1500:])

    one()


def test_report_counts(capsys):
    """How many invocations each command had, by exit code (0 and 1 mean real work ran)."""
    with capsys.disabled():
        print(f"\ncontainer CLI fuzz, by command and exit code: {STATS}")
