"""Run the real probe (``python -m valorch_probe``, as inside an image) against a torch
stand-in whose device properties behave as PyTorch's bindings do on a CUDA or a ROCm
build (tests/fixtures/fake_torch), with fake SMI tools that print real public captures."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from valorch_probe import MARKER

ROOT = Path(__file__).resolve().parents[2]
FIX = ROOT / "tests" / "fixtures"
FAKE_TORCH = FIX / "fake_torch"


def probe_copy(tmp: Path) -> Path:
    dest = tmp / "probe"
    shutil.copytree(
        ROOT / "valorch_probe",
        dest / "valorch_probe",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    return dest


def tool_printing(bindir: Path, name: str, capture: Path) -> None:
    """An executable ``name`` on ``bindir`` that prints a recorded capture."""
    bindir.mkdir(parents=True, exist_ok=True)
    exe = bindir / name
    exe.write_text("#!/bin/sh\ncat '%s'\n" % capture)
    exe.chmod(0o755)


def run_probe(tmp: Path, build, suite: str, *checks: str, expect=None, bindir: Path | None = None):
    probe = probe_copy(tmp)
    args = [sys.executable, "-m", "valorch_probe", "run", "--suite", suite, "--deadline", "60"]
    for c in checks:
        args += ["--check", c]
    if expect:
        args += ["--expect", json.dumps(expect)]
    path = ((str(bindir) + os.pathsep) if bindir else "") + "/usr/bin:/bin"
    env = {
        "PYTHONPATH": os.pathsep.join([str(probe), str(FAKE_TORCH)]),
        "PATH": path,
        "HOME": str(tmp),
        "FAKE_TORCH_BUILD": str(
            build if isinstance(build, Path) else FAKE_TORCH / ("%s.json" % build)
        ),
    }
    proc = subprocess.run(args, cwd=probe, capture_output=True, text=True, timeout=180, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    records = [
        json.loads(line[len(MARKER) :])
        for line in proc.stdout.splitlines()
        if line.startswith(MARKER)
    ]
    return {r["check"]: r for r in records if r["type"] == "result"}
