import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
VALORCH = str(Path(sys.executable).with_name("valorch"))


def run_cli(*args, db=None, cwd=None, timeout=600, env=None):
    """Run the real console script; returns CompletedProcess (text)."""
    full_env = dict(os.environ)
    full_env.pop("VALORCH_DB", None)
    if db is not None:
        full_env["VALORCH_DB"] = str(db)
    full_env.update(env or {})
    return subprocess.run([VALORCH, *args], capture_output=True, text=True, cwd=cwd or ROOT,
                          timeout=timeout, env=full_env)


@pytest.fixture
def cli(tmp_path):
    db = tmp_path / "valorch.sqlite"

    def call(*args, **kw):
        kw.setdefault("db", db)
        return run_cli(*args, **kw)

    call.db = db
    return call


@pytest.fixture
def probe_dir(tmp_path):
    """A private copy of the probe, named as it is inside containers."""
    dest = tmp_path / "probe"
    shutil.copytree(ROOT / "orchestrator" / "probe", dest / "valorch_probe",
                    ignore=shutil.ignore_patterns("__pycache__"))
    return dest
