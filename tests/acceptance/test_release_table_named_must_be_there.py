"""A release table named with --releases that is not there is bad input (exit 2, naming the
file and how to make one) before any work, on `inventory audit` and `matrix render`; it is
never read as "no table", which left the published comparison out without a word. Without
--releases, the default (releases.json beside the catalog, when there is one) is unchanged."""

from __future__ import annotations

import pytest
from conftest import run_cli


@pytest.mark.parametrize(
    "command",
    [
        ("inventory", "audit", "--image", "host"),
        ("matrix", "render", "--layout", "libraries"),
    ],
)
def test_a_missing_release_table_is_exit_2_before_any_work(tmp_path, command):
    missing, db = "nowhere.json", tmp_path / "v.sqlite"  # short: the error box wraps long paths
    proc = run_cli(*command, "--releases", missing, db=db, cwd=tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    said = " ".join(proc.stderr.replace("│", " ").split())
    assert f"{missing}: no such file" in said and "import-releases" in said, proc.stderr
    assert "Traceback" not in proc.stderr
    assert not db.exists()  # refused when parsed: no store opened, nothing gathered
