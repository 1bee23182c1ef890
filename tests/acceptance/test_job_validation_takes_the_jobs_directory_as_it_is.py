"""`valorch jobs validate jobs/*.yaml`, as the README writes it, meets jobs/known-issues.yaml
beside the job specs: the known-issues file is checked as what it is (valid, its entries
counted; a mistake in it named with its line), not refused as a job spec without `name`,
`images` and `suites`."""

from __future__ import annotations

import json

from conftest import ROOT, run_cli


def test_the_readme_glob_over_jobs_is_valid():
    files = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "jobs").glob("*.yaml"))
    assert "jobs/known-issues.yaml" in files
    proc = run_cli("jobs", "validate", *files)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "jobs/known-issues.yaml: valid (a known-issues file, not a job spec: " in proc.stdout
    assert "did you mean 'suites'" not in proc.stderr, proc.stderr

    listed = json.loads(run_cli("jobs", "validate", "--json", *files).stdout)
    ki = next(f for f in listed if f["file"] == "jobs/known-issues.yaml")
    assert ki["valid"] and ki["job"] is None and ki["known_issues"] >= 1, ki


def test_a_mistake_in_a_known_issues_file_is_named_with_its_line(tmp_path):
    path = tmp_path / "known-issues.yaml"
    path.write_text(
        'issues:\n  - check: "x.*"\n    images: "a*"\n    reason: r\n    expirs: 2027-01-01\n'
    )
    proc = run_cli("jobs", "validate", str(path))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert f"{path}:5: known issue: key 'expirs'" in proc.stderr, proc.stderr
