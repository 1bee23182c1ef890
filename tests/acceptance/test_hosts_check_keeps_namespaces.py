"""``hosts check`` names each image by its whole reference, as the user wrote it: the
namespace (``valorch/`` of ``valorch/test:debian-torch``) and a registry host with its path
stay, in the table, in ``--json`` and in a missing image's problem. Run against this
machine's engine and the local test images."""

import json

import pytest
from root_helpers import run_cli

pytestmark = pytest.mark.docker

PRESENT = ("valorch/test:debian-torch", "valorch/test:pip-torch")
ABSENT = "127.0.0.1:5999/team/tools:absent"  # a registry, a two-part path: nowhere pulled


def _check(tmp_path, *args, env=None):
    argv = ["hosts", "check"]
    for ref in (*PRESENT, ABSENT):
        argv += ["--image", ref]
    return run_cli(*argv, *args, db=tmp_path / "v.sqlite", env=env)


def test_table_shows_whole_references(tmp_path):
    proc = _check(tmp_path, env={"COLUMNS": "300"})
    assert proc.returncode == 3, proc.stderr  # the absent image is a problem
    assert "Traceback" not in proc.stderr
    for ref in PRESENT:
        assert f"{ref} (ok)" in proc.stdout
    assert f"{ABSENT} (missing)" in proc.stdout
    assert f"image {ABSENT} is not present" in proc.stdout
    assert "│ test:debian-torch" not in proc.stdout and ", test:pip-torch" not in proc.stdout


def test_json_keys_are_whole_references(tmp_path):
    proc = _check(tmp_path, "--json")
    assert proc.returncode == 3, proc.stderr
    (host,) = json.loads(proc.stdout)["hosts"]
    assert host["images"] == {PRESENT[0]: "ok", PRESENT[1]: "ok", ABSENT: "missing"}
    assert any(ABSENT in problem for problem in host["problems"])
