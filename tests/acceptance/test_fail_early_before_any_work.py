"""Options that name an output or need an optional package are checked before any work
starts: a --junit or --out that cannot be written, and --executor kubernetes without the
kubernetes package, are exit 2 with what to do; no check runs and no run is stored. Every
output option of every command is checked the same way."""

import json
import os
from pathlib import Path

import pytest
from root_helpers import ROOT, run_cli

pytestmark = pytest.mark.cli


def _nothing_stored(db):
    listed = run_cli("results", "list", "--json", db=db)
    return not Path(db).exists() or json.loads(listed.stdout or "[]") == []


@pytest.mark.parametrize("where", ["/proc/valorch.junit.xml", "{tmp}", "{tmp}/file/x.xml"])
def test_unwritable_junit_is_exit_2_before_the_run(tmp_path, where):
    (tmp_path / "file").write_text("a file, not a directory")
    db = tmp_path / "v.sqlite"
    done = run_cli(
        "run",
        "--image",
        "host",
        "--suite",
        "selftest",
        "--junit",
        where.format(tmp=tmp_path),
        db=db,
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert "--junit" in done.stderr and "Traceback" not in done.stderr
    assert "pass" not in done.stdout and _nothing_stored(db)


def test_qualify_out_dir_that_is_a_file_is_exit_2_before_the_run(tmp_path):
    (tmp_path / "report").write_text("a file")
    db = tmp_path / "v.sqlite"
    done = run_cli(
        "qualify",
        "--image",
        "host",
        "--baseline",
        "nothing",
        "--out-dir",
        str(tmp_path / "report"),
        db=db,
    )
    assert done.returncode == 2 and "--out-dir" in done.stderr, done.stderr
    assert _nothing_stored(db)


def test_writable_output_is_left_as_it_was(tmp_path):
    """The check writes nothing: a new path is not created, an existing file is unchanged."""
    new = tmp_path / "new.md"
    done = run_cli("matrix", "render", "--out", str(new), db=tmp_path / "v.sqlite")
    assert not new.exists() or done.returncode == 0, done.stderr
    old = tmp_path / "old.md"
    old.write_text("kept")
    run_cli("diff", "a", "b", "--out", str(old), db=tmp_path / "v.sqlite")
    assert old.read_text() == "kept"


def test_kubernetes_without_its_client_is_exit_2_with_the_install_command(tmp_path):
    shadow = tmp_path / "shadow" / "kubernetes"  # the package, as if not installed
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text(
        "raise ModuleNotFoundError(\"No module named 'kubernetes'\")\n"
    )
    env = {"PYTHONPATH": os.pathsep.join([str(shadow.parent), str(ROOT)])}
    db = tmp_path / "v.sqlite"
    done = run_cli(
        "run", "--image", "cpu_debian12_py3.11", "--executor", "kubernetes", db=db, env=env
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert "pip install 'valorch[k8s]'" in done.stderr
    assert "Traceback" not in done.stderr and "| Check |" not in done.stdout
    assert _nothing_stored(db)
