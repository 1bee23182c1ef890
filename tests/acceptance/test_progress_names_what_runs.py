"""Progress names what is running and expects what the store measured: in a CI log each
task's start says image/suite, host, its number of checks and its expected seconds; a
suite already measured on another image is expected to take that long (not a guess per
check); the live table has a "running now" column (image/suite · check n of m). A pull
that had nothing to download still says how it ended."""

import re
import subprocess

import pytest
import recipes_support as rs
from root_helpers import run_cli

pytestmark = pytest.mark.docker


def _run(db, image, *extra, catalog=None):
    argv = ["run", "--image", image, "--suite", "selftest", "--check", "selftest.pass"]
    argv += ["--check", "selftest.noise", "--no-matrix", *extra]
    if catalog:
        argv += ["--catalog", str(catalog)]
    done = run_cli(*argv, db=db)
    assert done.returncode == 0, done.stderr
    return done


def test_start_lines_name_the_task_and_expect_the_measured_time(tmp_path):
    db = tmp_path / "v.sqlite"
    first = _run(db, "host")
    start = re.search(r"start +host/selftest on (\S+) \(2 checks, expected (\d+)s\)", first.stderr)
    assert start, first.stderr
    measured = float(re.search(r"selftest=([\d.]+)s", first.stdout + first.stderr).group(1))
    second = _run(db, "valorch/base:bookworm")
    expected = re.search(r"start +\S+/selftest on \S+ \(2 checks, expected (\d+)s\)", second.stderr)
    assert expected, second.stderr
    assert abs(int(expected.group(1)) - measured) <= 1  # the measured suite, not 10 + 2 × checks


def test_a_pull_that_moved_nothing_says_how_it_ended(tmp_path):
    proc, registry = rs.serve_registry(tmp_path)
    reference = f"{registry}/team/base:v1"
    digest = rs.push(rs.SMALL, reference)
    catalog = tmp_path / "images"
    catalog.mkdir()
    (catalog / "t.yaml").write_text(
        f'family: t\nbackend: cpu\nimages:\n  - alias: t_base\n    reference: {reference}\n    digest: "{digest}"\n'
    )
    try:
        db = tmp_path / "v.sqlite"
        _run(db, "t_base", catalog=catalog)  # pulls it
        again = _run(db, "t_base", "--pull", "always", catalog=catalog)
        assert re.search(r"pulled .*t_base.*: ", again.stderr), again.stderr
    finally:
        rs.forget(f"{registry}/team/base@{digest}")
        subprocess.run(["docker", "rmi", reference], capture_output=True)
        proc.terminate()
        proc.wait(timeout=30)
