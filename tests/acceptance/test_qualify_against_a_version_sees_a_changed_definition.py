"""A published matrix version as the baseline (`qualify --baseline v1`, the README's way)
knows the definition of each check from the stored runs its cells name: a command check
whose expected output changed since, and that now fails, is "failing, not comparable
(definition changed)", never "regressed", as it is against the run itself."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from gate_support import qualify


def job(tmp_path: Path, pattern: str) -> Path:
    path = tmp_path / f"job-{len(pattern)}-{pattern[-3:].strip('^')}.yaml"
    command = {"id": "py", "argv": ["python3", "--version"], "stdout": [pattern]}
    path.write_text(
        yaml.safe_dump(
            {
                "name": "defv",
                "images": ["host"],
                "suites": [{"name": "command", "commands": [command]}],
            }
        )
    )
    return path


def test_a_changed_definition_is_not_comparable_against_a_published_version(cli, tmp_path):
    good = job(tmp_path, r"^Python 3")
    proc = cli("run", "--job", str(good), "--executor", "host", "--no-matrix", "--no-gate")
    assert proc.returncode == 0, proc.stderr
    assert cli("matrix", "publish", "--version", "defv-1", "--job", "defv").returncode == 0

    changed = job(tmp_path, r"^Python 2")
    proc = qualify(cli, changed, "defv-1", tmp_path / "q")
    said = proc.stdout + proc.stderr
    assert proc.returncode == 1, said  # still failing: a changed check is not excused
    report = json.loads((tmp_path / "q" / "qualify.json").read_text())
    assert report["counts"]["failing"] == 1 and report["counts"]["regressed"] == 0, report
    failures = (tmp_path / "q" / "report.md").read_text().split("## Failures")[1]
    assert "failing, not comparable (definition changed)" in failures, failures
    assert "| regressed |" not in failures, failures
