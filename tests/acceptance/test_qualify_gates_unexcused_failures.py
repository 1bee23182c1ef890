"""qualify against a baseline published from the same image: a failing candidate check gates
(exit 1) and is a <failure> in the JUnit; a check that failed in the baseline too is "still
failing", listed first, and gates unless --allow-known-failures or a known issue covers it."""

from __future__ import annotations

from gate_support import job, junit_cases, publish_baseline, qualify


def failures(cases):
    return sorted(name for name, (outcome, _) in cases.items() if outcome == "failure")


def test_still_failing_check_gates_and_is_a_junit_failure(cli, tmp_path):
    spec = job(tmp_path, "rel", ["selftest.pass", "selftest.fail"])
    publish_baseline(cli, spec, "v1", "rel-1")  # selftest.fail fails in the baseline too

    proc = qualify(cli, spec, "rel-1", tmp_path / "q")
    assert proc.returncode == 1, proc.stderr + proc.stdout
    assert "1 still failing" in proc.stderr and "host: selftest.fail" in proc.stderr
    cases = junit_cases(tmp_path / "q" / "report.junit.xml")
    assert failures(cases) == ["selftest.fail"] and cases["selftest.pass"][0] == "passed"
    md = (tmp_path / "q" / "report.md").read_text()
    verdict, _rest = md.split("<details>", 1)
    assert "## Verdict: ❌ NOT QUALIFIED" in verdict and "## Failures (1)" in verdict
    assert "still failing" in verdict and "planted failure" in verdict
    html = (tmp_path / "q" / "report.html").read_text()
    assert 'data-reason="still_failing" data-gates="true"' in html and '<details id="rest">' in html

    proc = qualify(cli, spec, "rel-1", tmp_path / "q-allowed", "--allow-known-failures")
    assert proc.returncode == 0, proc.stderr + proc.stdout
    assert "not gated: --allow-known-failures" in proc.stderr
    cases = junit_cases(tmp_path / "q-allowed" / "report.junit.xml")
    assert failures(cases) == [] and cases["selftest.fail"][0] == "skipped"

    issues = tmp_path / "known-issues.yaml"
    issues.write_text(
        "issues:\n  - check: selftest.fail\n    status: fail\n    reason: planted, by design\n"
        "    expires: 2999-01-01\n"
    )
    proc = qualify(cli, spec, "rel-1", tmp_path / "q-known", "--known-issues", str(issues))
    assert proc.returncode == 0, proc.stderr + proc.stdout
    assert junit_cases(tmp_path / "q-known" / "report.junit.xml")["selftest.fail"] == (
        "skipped",
        "waived: planted, by design",
    )


def test_new_failures_gate_even_with_allow_known_failures(cli, tmp_path):
    publish_baseline(cli, job(tmp_path, "rel", ["selftest.pass"], {"tool": 0}), "v1", "rel-1")
    # the same image; command.tool now exits 1 (pass → fail) and selftest.fail is a new failing check
    head = job(tmp_path, "rel-head", ["selftest.pass", "selftest.fail"], {"tool": 1})

    proc = qualify(cli, head, "rel-1", tmp_path / "q", "--allow-known-failures")
    assert proc.returncode == 1, proc.stderr + proc.stdout
    assert "2 failing in the candidate" in proc.stderr
    cases = junit_cases(tmp_path / "q" / "report.junit.xml")
    assert failures(cases) == ["command.tool", "selftest.fail"]
    md = (tmp_path / "q" / "report.md").read_text()
    assert md.index("## Failures (2)") < md.index("<details>")

    # diff of the same two sides says the same (its JUnit too)
    junit = tmp_path / "d.xml"
    proc = cli("diff", "rel-1", "latest:host", "--format", "junit", "--out", str(junit))
    assert proc.returncode == 1 and failures(junit_cases(junit)) == [
        "command.tool",
        "selftest.fail",
    ]
