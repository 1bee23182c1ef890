"""`valorch results list` whose filters match no run says so, naming the filters (a typo in
--job or --image read as an empty table before); an empty store says how to fill it; both
exit 0, and --json is still the empty list."""

from __future__ import annotations

import json

from conftest import run_cli


def test_no_match_names_the_filters_and_an_empty_store_says_so(tmp_path):
    db = tmp_path / "valorch.sqlite"
    proc = run_cli("results", "list", db=db)
    assert proc.returncode == 0, proc.stderr
    assert "no runs in the results database" in proc.stderr and "┏" not in proc.stdout

    assert (
        run_cli("run", "--image", "host", "--suite", "smoke", "--no-matrix", db=db).returncode == 0
    )
    proc = run_cli("results", "list", "--job", "nightyl", "--state", "done", db=db)
    assert proc.returncode == 0, proc.stderr
    assert "no runs match --job nightyl --state done" in proc.stderr, proc.stderr
    proc = run_cli("results", "list", "--job", "nightyl", "--json", db=db)
    assert proc.returncode == 0 and json.loads(proc.stdout) == [], proc.stdout + proc.stderr
    assert "adhoc" in run_cli("results", "list", db=db).stdout  # the run itself is listed
