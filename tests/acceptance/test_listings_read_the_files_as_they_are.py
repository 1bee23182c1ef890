"""``images list`` and ``jobs list`` validate the catalog and the job specs every time they
list them, so what they print is what the files say now: an edit that keeps a file's size and
modification time is listed, a broken file is the same error every time, a job whose shipped
workload went away leaves the list, and two listings of the same files print the same."""

from __future__ import annotations

import json
import os
import shutil

import pytest
from conftest import ROOT


@pytest.fixture()
def project(tmp_path):
    """A project directory with the repository's images/ and jobs/."""
    shutil.copytree(ROOT / "images", tmp_path / "project" / "images")
    shutil.copytree(ROOT / "jobs", tmp_path / "project" / "jobs")
    return tmp_path / "project"


def listing(cli, project, *argv):
    """The CLI's exit code, stdout and stderr."""
    proc = cli(*argv, cwd=project)
    return proc.returncode, proc.stdout, proc.stderr


@pytest.mark.parametrize("command", [("images", "list"), ("jobs", "list")])
def test_two_listings_of_the_same_files_say_the_same(cli, project, command):
    first = listing(cli, project, *command)
    second = listing(cli, project, *command)
    assert first[0] == second[0] == 0, first[2] + second[2]
    assert first[1] == second[1] and first[1]
    as_json = [listing(cli, project, *command, "--json") for _ in range(2)]
    assert as_json[0][1] == as_json[1][1]
    assert json.loads(as_json[1][1])


def test_an_edit_that_keeps_size_and_time_is_listed(cli, project):
    listing(cli, project, "images", "list")
    path = project / "images" / "cpu.yaml"
    before = path.stat()
    text = path.read_text()
    assert 'python: "3.12", debian: "12"' in text
    path.write_text(text.replace('python: "3.12", debian: "12"', 'python: "3.12", debian: "13"', 1))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert path.stat().st_size == before.st_size
    code, out, said = listing(cli, project, "images", "list", "--json")
    assert code == 0, said
    rows = {r["alias"]: r for r in json.loads(out)}
    assert rows["cpu_python3.12_slim"]["components"]["debian"] == "13"


def test_a_broken_catalog_is_the_same_error_every_time(cli, project):
    assert listing(cli, project, "images", "list")[0] == 0
    path = project / "images" / "cpu.yaml"
    good = path.read_text()
    path.write_text(good.replace("reference: python:3.12-slim-bookworm", "reference: [", 1))
    for _ in range(2):
        code, _out, said = listing(cli, project, "images", "list")
        assert code == 2
        assert "cpu.yaml:" in said and "Traceback" not in said
    path.write_text(good)
    assert listing(cli, project, "images", "list")[0] == 0


def test_a_job_whose_workload_went_away_leaves_the_list(cli, project):
    code, out, said = listing(cli, project, "jobs", "list", "--json")
    assert code == 0, said
    assert "commands-example" in {r["name"] for r in json.loads(out)}
    (project / "jobs" / "workloads" / "test_example.py").unlink()
    code, out, said = listing(cli, project, "jobs", "list", "--json")
    assert code == 0, said
    assert "commands-example" not in {r["name"] for r in json.loads(out)}
