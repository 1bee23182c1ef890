"""run --junit: a failing check is a <failure>, a partial one a passing testcase with its message
in <system-out>, a failure a known issue excuses <skipped> with the issue's reason (and it does
not gate the run)."""

from __future__ import annotations

from gate_support import junit_cases

CHECKS = (
    "--check",
    "selftest.pass",
    "--check",
    "selftest.fail",
    "--check",
    "features.dtype.uint16",
)


def test_run_junit_marks_failures_partial_and_known_issues(cli, tmp_path):
    junit = tmp_path / "run.xml"
    proc = cli(
        "run",
        "--image",
        "host",
        "--suite",
        "selftest",
        "--suite",
        "features",
        *CHECKS,
        "--no-matrix",
        "--junit",
        str(junit),
    )
    assert proc.returncode == 1, proc.stderr
    cases = junit_cases(junit)
    assert cases["selftest.fail"] == ("failure", "planted failure")
    assert cases["selftest.pass"] == ("passed", "")
    outcome, text = cases["features.dtype.uint16"]  # this host's torch has no add for uint16
    assert outcome == "passed" and text.startswith("partial: partial support: uint16")

    issues = tmp_path / "known-issues.yaml"
    issues.write_text(
        "issues:\n  - check: selftest.fail\n    reason: planted by the harness\n"
        "    expires: 2999-01-01\n"
    )
    proc = cli(
        "run",
        "--image",
        "host",
        "--suite",
        "selftest",
        "--suite",
        "features",
        *CHECKS,
        "--no-matrix",
        "--junit",
        str(junit),
        "--known-issues",
        str(issues),
    )
    assert proc.returncode == 0, proc.stderr
    cases = junit_cases(junit)
    assert cases["selftest.fail"] == ("skipped", "waived: planted by the harness")

    bad = tmp_path / "bad.yaml"
    bad.write_text("issues:\n  - check: selftest.fail\n    colour: red\n    reason: x\n")
    proc = cli("run", "--image", "host", "--suite", "selftest", "--known-issues", str(bad))
    assert proc.returncode == 2 and "bad.yaml" in proc.stderr and "colour" in proc.stderr
