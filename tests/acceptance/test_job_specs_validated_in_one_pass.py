"""A job spec is validated in one pass: every mistake of a file at once, each with its file,
line and key and the nearest key, suite, image or check, through ``valorch jobs validate
FILE…`` (exit 2 on any mistake, one line per valid file, ``--json``) and through ``valorch
run --job``, which reads the job through the same function and refuses the same mistakes
before anything runs. A checks glob that selects nothing (or has an unclosed ``[``) and an
argv that cannot be executed are spec errors; a glob over image aliases matches short
aliases; a job's name or label that a results import would refuse is refused on input.
"""

from __future__ import annotations

import json
import re
import shlex

import pytest
import yaml
from conftest import ROOT, run_cli

# deadlin (a key), kernals (a suite), an image and a tier, each misspelt once
FOUR_MISTAKES = """\
name: mine
images:
  - host
  - cpu_debian12_py3.11_pytorch_2.31
suites:
  - name: smoke
    tier: nighlty
  - name: kernals
    deadlin: 300
"""


def _write(tmp_path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_every_mistake_of_a_file_in_one_pass_with_the_nearest_names(tmp_path):
    job = _write(tmp_path, "mine.yaml", FOUR_MISTAKES)
    proc = run_cli("jobs", "validate", job)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    err = proc.stderr
    assert "Traceback" not in err
    assert (
        f"{job}:4: job spec: key 'images.1': unknown image 'cpu_debian12_py3.11_pytorch_2.31'"
        in err
    )
    assert "cpu_debian12_py3.11_pytorch_2.13" in err  # the nearest alias
    assert f"{job}:7: job spec: key 'suites.0.tier':" in err and "did you mean 'nightly'?" in err
    assert (
        f"{job}:8: job spec: key 'suites.1.name': unknown suite 'kernals'; did you mean 'kernels'?"
        in err
    )
    assert (
        f"{job}:9: job spec: key 'suites.1.deadlin': unknown key; did you mean 'deadline'?" in err
    )
    assert "1 of 1 job spec has mistakes" in err
    assert proc.stdout == ""

    # run --job: the same four, at once, and nothing stored
    db = tmp_path / "s.sqlite"
    proc = run_cli("run", "--job", job, "--no-matrix", db=db, cwd=tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert f"4 mistakes in {job}:" in proc.stderr
    for key in ("images.1", "suites.0.tier", "suites.1.name", "suites.1.deadlin"):
        assert f"key '{key}'" in proc.stderr, key
    assert "did you mean 'kernels'?" in proc.stderr and "did you mean 'deadline'?" in proc.stderr
    assert not db.exists()


def test_several_files_valid_and_not_with_json(tmp_path):
    bad = _write(tmp_path, "bad.yaml", FOUR_MISTAKES)
    good = str(ROOT / "jobs" / "smoke.yaml")
    proc = run_cli("jobs", "validate", good, "nightly")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert lines == [
        f"{good}: valid (job smoke: 1 image, 1 suite)",
        f"{ROOT / 'jobs' / 'nightly.yaml'}: valid (job nightly: 3 images, 2 suites)",
    ], proc.stdout

    proc = run_cli("jobs", "validate", good, bad, "--json")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    doc = json.loads(proc.stdout)
    assert [(d["file"], d["valid"], d["job"]) for d in doc] == [
        (good, True, "smoke"),
        (bad, False, None),
    ]
    assert [(p["line"], p["key"]) for p in doc[1]["problems"]] == [
        (4, "images.1"),
        (7, "suites.0.tier"),
        (8, "suites.1.name"),
        (9, "suites.1.deadlin"),
    ]
    assert doc[1]["problems"][2]["hint"].startswith("known suites: smoke")
    assert "1 of 2 job specs has mistakes" in proc.stderr


# Mistakes that used to run nothing (an empty run, exit 0) or become an ``unsupported`` result
# of a command that can never execute: each is a spec error, before anything runs.
SPEC_ERRORS = {
    "glob-matches-nothing": (
        "  - name: selftest\n    checks: [selftest.pas]\n",
        "key 'suites.0.checks.0': check glob 'selftest.pas' matches no check of suite selftest; "
        "nearest: selftest.pass",
    ),
    "glob-unclosed-bracket": (
        "  - name: selftest\n    checks: ['selftest.[pf']\n",
        "key 'suites.0.checks.0': check glob 'selftest.[pf' has a [ at character 10 that is "
        "never closed (it would match nothing)",
    ),
    "argv-empty": (
        '  - name: command\n    commands: [{id: a, argv: [""]}]\n',
        "key 'suites.0.commands.0.argv': argv[0] is empty",
    ),
    "argv-nul": (
        '  - name: command\n    commands: [{id: a, argv: ["touch\\0", "made"]}]\n',
        "key 'suites.0.commands.0.argv': argv[0] holds a NUL character",
    ),
    "argv-nul-later": (
        '  - name: command\n    commands: [{id: a, argv: [touch, "ma\\0de"]}]\n',
        "key 'suites.0.commands.0.argv': argv[1] holds a NUL character",
    ),
    "argv-not-a-program": (
        '  - name: command\n    commands: [{id: a, argv: ["touch made"]}]\n',
        "key 'suites.0.commands.0.argv': argv[0] 'touch made' is not a program name: no shell "
        "splits it; write ['touch', 'made']",
    ),
}


def _spec(tmp_path, case: str) -> str:
    suite, _ = SPEC_ERRORS[case]
    return _write(tmp_path, f"{case}.yaml", f"name: {case}\nimages: [host]\nsuites:\n{suite}")


def test_each_spec_error_in_one_validate_call_of_several_files(tmp_path):
    files = [_spec(tmp_path, case) for case in SPEC_ERRORS]
    proc = run_cli("jobs", "validate", *files)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    for path, (_, said) in zip(files, SPEC_ERRORS.values(), strict=True):
        assert f"{path}:5: job spec: {said}" in proc.stderr, (path, proc.stderr)
    assert f"{len(files)} of {len(files)} job specs have mistakes" in proc.stderr
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize("case", SPEC_ERRORS)
def test_run_job_refuses_each_before_anything_runs(case, tmp_path):
    job = _spec(tmp_path, case)
    db = tmp_path / "s.sqlite"
    proc = run_cli("run", "--job", job, "--no-matrix", db=db, cwd=tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert f"{job}:5: job spec: {SPEC_ERRORS[case][1]}" in proc.stderr
    assert not db.exists() and not (tmp_path / "made").exists()


def test_text_an_import_would_refuse_is_refused_in_the_spec(tmp_path):
    job = _write(
        tmp_path,
        "text.yaml",
        'name: "nightly\\e[2J"\nlabels: ["", "ok", "rtl\\u202Eevil"]\n'
        f"description: {'x' * 2001}\nimages: [host]\nsuites: [smoke]\n",
    )
    proc = run_cli("jobs", "validate", job)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    err = proc.stderr
    assert f"{job}:1: job spec: key 'name': holds the control character U+001B at offset 7" in err
    assert f"{job}:2: job spec: key 'labels.0': String should have at least 1 character" in err
    assert f"{job}:2: job spec: key 'labels.2': holds the control character U+202E" in err
    assert f"{job}:3: job spec: key 'description': String should have at most 2000" in err
    assert "\x1b" not in err  # the terminal sees no escape sequence


def test_a_glob_over_short_aliases_selects_images(tmp_path):
    glob = "rocm6.3_py3.10_pytorch_2.*"
    job = _write(tmp_path, "short.yaml", f"name: short\nimages: ['{glob}']\nsuites: [smoke]\n")
    proc = run_cli("jobs", "show", job)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    shown = [
        line.split()[1] for line in proc.stdout.splitlines() if line.strip().startswith("image")
    ]
    assert shown == [
        "rocm6.3_ubuntu22.04_py3.10_pytorch_2.4",
        "rocm6.3_ubuntu22.04_py3.10_pytorch_2.3",
        "rocm6.3_ubuntu22.04_py3.10_pytorch_2.2",
    ]
    # run --image with the glob: selected, then refused for lack of a ROCm host (a CPU-only
    # hosts file, whatever this machine has), not "matches no image"
    hosts = _write(tmp_path, "hosts.yaml", "hosts:\n  - name: cpu-only\n")
    proc = run_cli("run", "--image", glob, "--hosts", hosts, db=tmp_path / "s.sqlite")
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert "matches no image" not in proc.stderr
    assert "no host can run image rocm6.3_ubuntu22.04_py3.10_pytorch_2." in proc.stderr
    proc = run_cli(
        "jobs",
        "validate",
        _write(
            tmp_path,
            "typo.yaml",
            "name: t\nimages: ['rocm6.3_py3.10_pytorch_3.*']\nsuites: [smoke]\n",
        ),
    )
    assert proc.returncode == 2
    assert (
        "image selector 'rocm6.3_py3.10_pytorch_3.*' matches no image; did you mean" in proc.stderr
    )


def test_the_pre_commit_hook_passes_this_repositorys_jobs_and_the_readme_shows_it():
    """The hook as pre-commit would run it: its entry on the files its patterns select."""
    (hook,) = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    snippet = re.search(r"```yaml\n(\s*repos:.*?)```", readme, re.S)
    assert snippet, "the README shows a .pre-commit-config.yaml snippet"
    (local,) = yaml.safe_load(snippet.group(1))["repos"][0]["hooks"]
    assert {k: local[k] for k in ("id", "entry", "files", "exclude")} == {
        k: hook[k] for k in ("id", "entry", "files", "exclude")
    }
    files = sorted(
        str(p.relative_to(ROOT))
        for p in (ROOT / "jobs").rglob("*")
        if re.search(hook["files"], str(p.relative_to(ROOT)))
        and not re.search(hook["exclude"], str(p.relative_to(ROOT)))
    )
    assert "jobs/smoke.yaml" in files and "jobs/known-issues.yaml" not in files
    program, *args = shlex.split(hook["entry"])
    assert program == "valorch"
    proc = run_cli(*args, *files)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert len(proc.stdout.splitlines()) == len(files)


def test_a_value_yaml_did_not_read_as_text_says_to_quote_it(tmp_path):
    """`argv: [true]` and `1.10` are a boolean and a number to YAML: where text is wanted the
    mistake says so, and what to do, for every such value of the file at once."""
    path = _write(
        tmp_path,
        "unquoted.yaml",
        "name: unquoted\nimages: [host]\nsuites:\n  - name: command\n    commands:\n"
        "      - id: t\n        argv: [true]\n      - id: v\n        argv: [echo, 1.10]\n",
    )
    proc = run_cli("jobs", "validate", path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert f"{path}:7: job spec: key 'suites.0.commands.0.argv.0'" in proc.stderr
    assert "YAML read it as the boolean True, not as text: quote it" in proc.stderr
    assert f"{path}:9: job spec: key 'suites.0.commands.1.argv.1'" in proc.stderr
    assert "YAML read it as the number 1.1, not as text: quote it" in proc.stderr
