"""A check whose definition changed between baseline and candidate (here: its expected output)
is triaged "definition changed", never "flaky": the spec changed, the image did not. The hash
of each check's effective definition is stored with its results; diff shows such a cell as
not comparable, naming the change."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from gate_support import qualify


def version_job(tmp_path: Path, name: str, pattern: str) -> Path:
    path = tmp_path / f"{name}.yaml"
    command = {"id": "python-version", "argv": ["python3", "--version"], "stdout": [pattern]}
    path.write_text(
        yaml.safe_dump(
            {
                "name": "rel-host",
                "images": ["host"],
                "suites": [{"name": "command", "commands": [command]}],
            }
        )
    )
    return path


def test_a_changed_expected_output_is_triaged_definition_changed_not_flaky(cli, tmp_path):
    good = version_job(tmp_path, "rel-host", r"^Python 3\.\d+")
    for _ in range(2):  # two passing runs of the same digest on the same host
        proc = cli("run", "--job", str(good), "--executor", "host", "--no-matrix", "--no-gate")
        assert proc.returncode == 0, proc.stderr
    assert cli("matrix", "publish", "--version", "v0.2", "--job", "rel-host").returncode == 0
    assert cli("baseline", "set", "hb-v0.2", "v0.2").returncode == 0

    changed = version_job(tmp_path, "rel-host-fail", r"^Python 2\.\d+")
    proc = qualify(cli, changed, "hb-v0.2", tmp_path / "q")
    said = proc.stdout + proc.stderr
    assert proc.returncode == 1, said
    assert "definition changed" in said and "flaky" not in said, said
    report = (tmp_path / "q" / "report.md").read_text()
    assert "definition changed" in report and "flaky:" not in report

    # the stored triage of the candidate's run says the same (results show)
    runs = json.loads(cli("results", "list", "--json").stdout)
    newest = runs[0]["run"]
    shown = json.loads(cli("results", "show", newest, "--json").stdout)
    assert "definition changed" in json.dumps(shown)

    # diff of a passing run against the changed one: not comparable, the change named
    base = runs[-1]["run"]
    proc = cli("diff", base, newest)
    assert "definition changed" in proc.stdout, proc.stdout + proc.stderr
