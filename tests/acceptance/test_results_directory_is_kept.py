"""``results/`` is part of a clone (beside orchestrator/, images/, jobs/) with a README
saying what lands there and how to point it elsewhere; git ignores only its contents.
The defaults the CLI states are the ones the README names."""

import subprocess

from root_helpers import ROOT, run_cli


def _git(*args):
    return subprocess.run(["git", *args], capture_output=True, text=True, cwd=ROOT)


def test_results_readme_is_tracked_and_contents_ignored():
    assert "results/README.md" in _git("ls-files", "results").stdout.split()
    assert _git("check-ignore", "-q", "results/README.md").returncode == 1  # not ignored
    for produced in ("results/valorch.sqlite", "results/site/index.html", "results/slurm/x.out"):
        assert _git("check-ignore", "-q", produced).returncode == 0, produced


def test_readme_names_the_defaults_the_cli_states():
    readme = (ROOT / "results" / "README.md").read_text()
    run_help = run_cli("run", "--help", env={"COLUMNS": "200"}).stdout
    assert "./results/valorch.sqlite" in run_help and "results/valorch.sqlite" in readme
    assert "./results/slurm" in run_help and "results/slurm/" in readme
    for how in ("--db", "VALORCH_DB", "--out", "--slurm-spool", "--out-dir"):
        assert how in readme, how


def test_a_run_without_db_lands_in_results(tmp_path):
    (tmp_path / "results").mkdir()
    proc = run_cli(
        "run",
        "--image",
        "host",
        "--suite",
        "selftest",
        "--check",
        "selftest.pass",
        "--no-matrix",
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "results" / "valorch.sqlite").is_file()
