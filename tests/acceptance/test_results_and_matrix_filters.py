"""Filters a release engineer reaches for: ``results list --job/--image/--state/--since``,
``results show RUN --status fail,crash`` and ``matrix render --status``, all through the
real CLI on runs of the local interpreter (``--image host``)."""

import json
from datetime import datetime, timedelta, timezone

import pytest

JOB = """name: filters-job
images: [host]
suites:
  - name: command
    commands:
      - id: wordy
        argv: [python3, -c, "import sys; sys.stderr.write('detail ' * 60 + 'END-OF-MESSAGE'); sys.exit(3)"]
      - id: fine
        argv: [python3, --version]
"""


@pytest.fixture
def two_runs(cli, tmp_path):
    job = tmp_path / "filters.yaml"
    job.write_text(JOB)
    assert cli("run", "--job", str(job), "--no-gate", "--no-matrix").returncode == 0
    adhoc = cli(
        "run",
        "--image",
        "host",
        "--suite",
        "selftest",
        "--check",
        "selftest.pass",
        "--no-gate",
        "--no-matrix",
    )
    assert adhoc.returncode == 0, adhoc.stderr
    runs = json.loads(cli("results", "list", "--json").stdout)
    assert len(runs) == 2
    return {r["job"]: r["run"] for r in runs}


def _listed(cli, *args):
    proc = cli("results", "list", "--json", *args)
    assert proc.returncode == 0, proc.stderr
    return [r["run"] for r in json.loads(proc.stdout)]


def test_results_list_filters(cli, two_runs):
    assert _listed(cli, "--job", "filters-job") == [two_runs["filters-job"]]
    assert _listed(cli, "--job", "adhoc") == [two_runs["adhoc"]]
    assert _listed(cli, "--job", "nope") == []
    assert sorted(_listed(cli, "--image", "host")) == sorted(two_runs.values())
    assert sorted(_listed(cli, "--state", "done,interrupted")) == sorted(two_runs.values())
    assert _listed(cli, "--state", "interrupted") == []
    tomorrow = (datetime.now(timezone.utc) + timedelta(days=1)).strftime("%Y-%m-%d")
    yesterday = (datetime.now(timezone.utc) - timedelta(days=1)).strftime("%Y-%m-%d")
    assert _listed(cli, "--since", tomorrow) == []
    assert sorted(_listed(cli, "--since", yesterday, "--job", "filters-job")) == [
        two_runs["filters-job"]
    ]
    # the same filters through SQLAlchemy (a sqlite:/// URL does not take the fast path)
    url = f"sqlite:///{cli.db}"
    slow = cli(
        "results",
        "list",
        "--json",
        "--job",
        "filters-job",
        "--state",
        "done",
        "--since",
        yesterday,
        db=url,
    )
    assert [r["run"] for r in json.loads(slow.stdout)] == [two_runs["filters-job"]]


def test_results_list_bad_state_is_exit_2(cli, two_runs):
    proc = cli("results", "list", "--state", "finished")
    assert proc.returncode == 2 and "--state" in proc.stderr and "interrupted" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_results_show_status_filter_and_whole_messages_in_a_pipe(cli, two_runs):
    run = two_runs["filters-job"]
    proc = cli("results", "show", run, "--status", "fail,crash")
    assert proc.returncode == 0, proc.stderr
    assert "command.wordy" in proc.stdout and "command.fine" not in proc.stdout
    # stdout is a pipe here: the message is whole (it was cut at 100 characters)
    assert "END-OF-MESSAGE" in proc.stdout
    data = json.loads(cli("results", "show", run, "--status", "pass", "--json").stdout)
    assert [r["check"] for r in data["results"]] == ["command.fine"]
    bad = cli("results", "show", run, "--status", "broken")
    assert bad.returncode == 2 and "--status" in bad.stderr and "crash" in bad.stderr
    none = cli("results", "show", run, "--status", "timeout")  # says so, no empty table
    assert none.returncode == 0 and "no attempt of this run ended in timeout" in none.stdout
    assert "┃ check" not in none.stdout


def test_results_list_run_ids_whole_in_a_pipe(cli, two_runs):
    text = cli("results", "list").stdout
    assert all(run in text for run in two_runs.values())


def test_matrix_render_status(cli, two_runs):
    proc = cli("matrix", "render", "--job", "filters-job", "--status", "fail")
    assert proc.returncode == 0, proc.stderr
    assert "command.wordy" in proc.stdout and "command.fine" not in proc.stdout
    everything = cli("matrix", "render", "--job", "filters-job").stdout
    assert "command.wordy" in everything and "command.fine" in everything
    passing = json.loads(
        cli("matrix", "render", "--job", "filters-job", "--status", "pass", "-f", "json").stdout
    )
    assert [r["key"] for r in passing["rows"]] == ["command.fine"] and passing["params"][
        "status"
    ] == ["pass"]
    for fmt in ("md", "html", "rst"):  # a filter that matches nothing says so
        none = cli("matrix", "render", "--job", "filters-job", "--status", "timeout", "-f", fmt)
        assert none.returncode == 0 and "No row has a cell in timeout" in none.stdout, none.stdout
        assert "command.wordy" not in none.stdout and "command.fine" not in none.stdout
    bad = cli("matrix", "render", "--status", "red")
    assert bad.returncode == 2 and "--status" in bad.stderr
