"""`pip install valorch` alone is a working core: with the satellites' packages (cyclonedx,
packageurl, securesystemslib, kubernetes) unimportable, the core's commands run, every
satellite's command is still listed, and asking for a satellite is exit 2 with the
install command, before any work; the site, whose extra brings nothing (its plots are
valorch's own SVG), builds. A run of the core imports no satellite module but the command
modules the CLI registers."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from root_helpers import ROOT, run_cli

SATELLITE_PACKAGES = ("cyclonedx", "packageurl", "securesystemslib", "kubernetes")


@pytest.fixture
def core_only(tmp_path):
    """An environment in which the satellites' packages cannot be imported (as if their extras
    were never installed): a sitecustomize first on the path puts None in sys.modules. The
    rest of the path is the test run's own (the packages it was given)."""
    shadow = tmp_path / "shadow"
    shadow.mkdir()
    (shadow / "sitecustomize.py").write_text(
        f"import sys\nfor name in {SATELLITE_PACKAGES!r}:\n    sys.modules[name] = None\n"
    )
    inherited = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    return {"PYTHONPATH": os.pathsep.join([str(shadow), str(ROOT), *inherited])}


def test_help_lists_every_satellite_command_without_its_extra(core_only):
    done = run_cli("--help", env=core_only)
    assert done.returncode == 0, done.stderr
    for command in ("site", "attest", "verify", "run", "diff", "qualify"):
        assert f" {command} " in done.stdout, command


def test_core_commands_work_and_satellites_name_their_extra(core_only, tmp_path):
    db = tmp_path / "v.sqlite"
    ran = run_cli(
        "run", "--image", "host", "--suite", "selftest", "--check", "selftest.pass",
        "--no-matrix", db=db, env=core_only,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr[-2000:]
    listed = run_cli("results", "list", db=db, env=core_only)
    assert listed.returncode == 0 and "host" in listed.stdout, listed.stderr
    site = tmp_path / "site"
    built = run_cli("site", "build", "--out", str(site), db=db, env=core_only)
    assert built.returncode == 0, built.stdout + built.stderr  # no package beyond the core's
    assert (site / "index.html").is_file() and "Traceback" not in built.stderr
    key = tmp_path / "key.pem"
    key.write_text("not read: the extra is missing")
    attest = run_cli("attest", "--run", "x", "--key", str(key), db=db, env=core_only)
    assert attest.returncode == 2 and "pip install 'valorch[attest]'" in attest.stderr
    k8s = run_cli("run", "--image", "host", "--executor", "kubernetes", db=db, env=core_only)
    assert k8s.returncode == 2 and "pip install 'valorch[k8s]'" in k8s.stderr
    sbom = run_cli("inventory", "show", "x", "--format", "cyclonedx", db=db, env=core_only)
    assert sbom.returncode == 2 and "pip install 'valorch[sbom]'" in sbom.stderr, sbom.stderr


# the console script, printing at exit which satellite modules the process imported
PROGRAM = (
    "import atexit, sys\n"
    "atexit.register(lambda: print('imported satellite modules:', *sorted(m for m in sys.modules"
    " if m.startswith('orchestrator.ext.')), file=sys.stderr))\n"
    "from orchestrator.cli import main\n"
    "main()\n"
)


def test_a_core_run_imports_no_satellite_module_but_the_registered_commands(tmp_path):
    db = tmp_path / "v.sqlite"
    env = {k: v for k, v in os.environ.items() if k != "VALORCH_DB"}
    done = subprocess.run(
        [
            sys.executable, "-c", PROGRAM,
            "run", "--image", "host", "--suite", "selftest", "--check", "selftest.pass",
            "--no-matrix", "--db", str(db),
        ],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    # a command line imports the module of the command it names, no other
    assert _satellite_modules(done.stderr) == set()
    listed = subprocess.run(
        [sys.executable, "-c", PROGRAM, "--help"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert listed.returncode == 0, listed.stderr[-2000:]
    # --help lists every command: the satellites' registered command modules, nothing else
    imported = _satellite_modules(listed.stderr)
    assert imported, "the CLI registers the satellites' commands from their command modules"
    assert all(m.endswith(".command") or m.count(".") <= 2 for m in imported), sorted(imported)


def _satellite_modules(stderr: str) -> set[str]:
    (line,) = [x for x in stderr.splitlines() if x.startswith("imported satellite modules:")]
    return set(line.split(":", 1)[1].split())
