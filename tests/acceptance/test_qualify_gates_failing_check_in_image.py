"""An unexcused failure gates qualify, on a real image: a baseline published from the same image, where
compile.inductor.mlp fails (the test image has no C compiler for inductor), and a qualify
of the same job: exit 1 (still failing), one <failure> in the JUnit; a known issue excuses it."""

from __future__ import annotations

import pytest
import yaml
from gate_support import junit_cases

TORCH2 = "cpu_debian12_py3.11_pytorch_2.13"


@pytest.mark.docker
def test_qualify_against_same_image_baseline_fails_on_the_failing_check(cli, tmp_path):
    spec = tmp_path / "rel-image.yaml"
    spec.write_text(
        yaml.safe_dump(
            {
                "name": "rel-image",
                "images": [TORCH2],
                "suites": [
                    {"name": "smoke", "checks": ["smoke.tensor_add"]},
                    {"name": "compile", "checks": ["compile.inductor.mlp"]},
                ],
            }
        )
    )
    proc = cli("run", "--job", str(spec), "--no-matrix", "--no-gate")
    assert proc.returncode == 0, proc.stderr
    assert cli("matrix", "publish", "--version", "v1", "--job", "rel-image").returncode == 0
    assert cli("baseline", "set", "rel-1", "v1").returncode == 0

    out = tmp_path / "q"
    proc = cli(
        "qualify",
        "--job",
        str(spec),
        "--baseline",
        "rel-1",
        "--out-dir",
        str(out),
        "--threshold",
        "3",
    )
    assert proc.returncode == 1, proc.stderr + proc.stdout
    assert (
        f"1 still failing (failed in the baseline too): {TORCH2}: compile.inductor.mlp"
        in proc.stderr
    )
    cases = junit_cases(out / "report.junit.xml")
    assert [k for k, (outcome, _) in cases.items() if outcome == "failure"] == [
        "compile.inductor.mlp"
    ]
    assert "compiler" in cases["compile.inductor.mlp"][1]
    assert (out / "report.junit.xml").read_text().count("<failure") == 1

    issues = tmp_path / "known-issues.yaml"
    issues.write_text(
        f'issues:\n  - check: compile.inductor.*\n    images: "{TORCH2}"\n    status: fail\n'
        "    reason: the test image ships no C compiler for inductor\n    expires: 2999-01-01\n"
    )
    proc = cli(
        "qualify",
        "--job",
        str(spec),
        "--baseline",
        "rel-1",
        "--out-dir",
        str(tmp_path / "q-known"),
        "--threshold",
        "3",
        "--known-issues",
        str(issues),
    )
    assert proc.returncode == 0, proc.stderr + proc.stdout
    assert junit_cases(tmp_path / "q-known" / "report.junit.xml")["compile.inductor.mlp"] == (
        "skipped",
        "waived: the test image ships no C compiler for inductor",
    )
