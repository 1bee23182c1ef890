"""Hold one rank of a multi-node task at a point it cannot pass, so that a fault test strikes
it there whatever the machine's speed (a test that waits for a result and then kills a
container races the container's end on a slow machine).

How, without a hook in the probe or a change to the image: the private dockerd of a test
runs every container through an OCI runtime wrapper (``runtime()``: valorch never sees it)
that, for a probe container (its environment sets ``PYTHONPATH``), bind-mounts a host
directory at ``/valorch-hold`` and puts it first on ``PYTHONPATH``. The ``sitecustomize`` there
wraps the probe's ``multinode.group`` (every multinode check calls it first) in rank 1 only:
its Nth call writes ``held`` and waits for ``release``, which the test never writes before
its fault. N = 1 holds the rank before it joins the group (at the rendezvous), N = 2 after
the first check passed on every rank (mid-task, with rank 0 waiting in the next
collective). Without ``hold_at`` in the directory nothing is held.

A declared command can wait there too (``WAIT_FOR_RELEASE``): it writes ``held`` and waits
for ``release``, so that a test strikes while that check runs, and a resumed run, released,
passes it at once."""

from __future__ import annotations

import shutil
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

MOUNT = "/valorch-hold"
#: a command check's argv that waits, inside a container of a holding engine, for the release
WAIT_FOR_RELEASE = (
    "sh",
    "-c",
    f"touch {MOUNT}/held; until [ -e {MOUNT}/release ]; do sleep 0.1; done",
)

WRAPPER = '''#!{python}
"""runc, with the hold directory mounted into a gang's probe containers (tests/rank_hold.py)."""
import json, os, sys

args = sys.argv[1:]
if "create" in args:
    bundle = next(
        (args[i + 1] for i, a in enumerate(args[:-1]) if a in ("--bundle", "-b")), None
    ) or next((a.split("=", 1)[1] for a in args if a.startswith("--bundle=")), None)
    path = os.path.join(bundle or ".", "config.json")
    with open(path) as fh:
        config = json.load(fh)
    env = config["process"].get("env", [])
    if any(e.startswith("PYTHONPATH=") for e in env):
        config["process"]["env"] = [
            "PYTHONPATH={mount}:" + e.split("=", 1)[1] if e.startswith("PYTHONPATH=") else e
            for e in env
        ]
        config["mounts"].append(
            {{"destination": "{mount}", "type": "bind", "source": "{hold}",
              "options": ["rbind", "rw"]}}
        )
        with open(path, "w") as fh:
            json.dump(config, fh)
os.execv("{runc}", ["runc", *args])
'''

SITECUSTOMIZE = '''"""Rank 1 of a gang waits at the Nth multinode check (tests/rank_hold.py)."""
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TARGET = "valorch_probe.checks.multinode"


def _hold_at():
    try:
        with open(os.path.join(HERE, "hold_at")) as fh:
            return int(fh.read())
    except (OSError, ValueError):
        return 0


def _patch(module):
    calls = [0]
    group = module.group

    def held(ctx):
        calls[0] += 1
        if calls[0] == AT:
            with open(os.path.join(HERE, "held"), "w") as fh:
                fh.write(str(os.getpid()))
            while not os.path.exists(os.path.join(HERE, "release")):
                time.sleep(0.05)
        return group(ctx)

    module.group = held


class _Finder(object):
    def find_spec(self, name, path, target=None):
        if name != TARGET:
            return None
        import importlib.machinery

        spec = importlib.machinery.PathFinder.find_spec(name, path)
        run = spec.loader.exec_module

        def exec_module(module):
            run(module)
            _patch(module)

        spec.loader.exec_module = exec_module
        return spec


AT = _hold_at() if os.environ.get("RANK") == "1" else 0
if AT:
    sys.meta_path.insert(0, _Finder())
'''


def runtime(hold: Path, base: Path) -> tuple[str, ...]:
    """The dockerd options that run every container through the wrapper, with ``hold`` the
    directory it mounts (made here: writable by the probe's unprivileged user)."""
    hold.mkdir(parents=True, exist_ok=True)
    hold.chmod(0o777)
    (hold / "sitecustomize.py").write_text(SITECUSTOMIZE)
    wrapper = base / "runc-hold"
    base.mkdir(parents=True, exist_ok=True)
    runc = shutil.which("runc") or shutil.which("runc", path="/usr/sbin:/usr/bin:/sbin:/bin")
    if not runc:
        pytest.skip("runc is needed to hold a rank (Debian's runc, a dependency of docker.io)")
    wrapper.write_text(WRAPPER.format(python=sys.executable, mount=MOUNT, hold=hold, runc=runc))
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return (f"--add-runtime=hold={wrapper}", "--default-runtime=hold")


def arm(hold: Path, at: int) -> None:
    """Hold rank 1 at its ``at``-th multinode check (0: hold nothing) from the next task on."""
    for name in ("held", "release", "hold_at"):
        (hold / name).unlink(missing_ok=True)
    if at:
        (hold / "hold_at").write_text(str(at))


def release(hold: Path) -> None:
    (hold / "release").write_text("")
    (hold / "hold_at").unlink(missing_ok=True)


def is_held(hold: Path) -> bool:
    return (hold / "held").exists()


def wait_until_held(hold: Path, proc: subprocess.Popen) -> None:
    """Until rank 1 waits at its hold, while the valorch ``proc`` runs (its stderr is the
    failure's message otherwise). No time limit of its own: the task's deadline is one."""
    while not (hold / "held").exists():
        if proc.poll() is not None:
            pytest.fail(f"valorch ended before rank 1 was held: {proc.communicate()[1][-3000:]}")
        time.sleep(0.1)
