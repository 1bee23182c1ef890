"""qualify against a published baseline of two suites, with a head that ran only one: the lost
coverage fails the gate (exit 1, named), unless --allow-coverage-loss or a known issue covers it;
diff lists the loss first and gates on it only with --gate-coverage."""

from __future__ import annotations

import json

from gate_support import job, junit_cases, publish_baseline, qualify


def test_qualify_fails_when_a_baseline_suite_is_missing_from_the_head(cli, tmp_path):
    publish_baseline(
        cli, job(tmp_path, "rel-full", ["selftest.pass"], {"ok": 0, "also": 0}), "v1", "rel-1"
    )
    narrow = job(tmp_path, "rel-narrow", ["selftest.pass"])

    proc = qualify(cli, narrow, "rel-1", tmp_path / "q-lost")
    assert proc.returncode == 1, proc.stderr + proc.stdout
    assert "qualification failed" in proc.stderr and "2 coverage lost" in proc.stderr
    assert "host: command.ok" in proc.stderr and "Traceback" not in proc.stderr
    md = (tmp_path / "q-lost" / "report.md").read_text()
    first_screen = md.split("<details>")[0]  # the verdict block, then the gate's sections
    assert "## Verdict: ❌ NOT QUALIFIED" in first_screen and "## Coverage lost (2)" in first_screen
    assert "`command.ok`" in first_screen and "`command.also`" in first_screen
    cases = junit_cases(tmp_path / "q-lost" / "report.junit.xml")
    assert cases["command.ok"][0] == cases["command.also"][0] == "failure"
    assert cases["selftest.pass"][0] == "passed"

    # allowed by the flag: qualified, and the loss is still said
    proc = qualify(cli, narrow, "rel-1", tmp_path / "q-allowed", "--allow-coverage-loss")
    assert proc.returncode == 0, proc.stderr + proc.stdout
    assert "qualified" in proc.stderr and "not gated: --allow-coverage-loss" in proc.stderr
    cases = junit_cases(tmp_path / "q-allowed" / "report.junit.xml")
    assert cases["command.ok"] == ("skipped", cases["command.ok"][1])
    assert "not gated: --allow-coverage-loss" in cases["command.ok"][1]

    # covered by a live known issue (status missing: the check is not run): qualified
    issues = tmp_path / "known-issues.yaml"
    issues.write_text(
        'issues:\n  - check: "command.*"\n    status: missing\n'
        "    reason: command checks move to the nightly job\n    expires: 2999-01-01\n"
    )
    proc = qualify(cli, narrow, "rel-1", tmp_path / "q-known", "--known-issues", str(issues))
    assert proc.returncode == 0, proc.stderr + proc.stdout
    cases = junit_cases(tmp_path / "q-known" / "report.junit.xml")
    assert cases["command.ok"] == ("skipped", "waived: command checks move to the nightly job")

    # an expired entry covers nothing
    issues.write_text(issues.read_text().replace("2999-01-01", "2001-01-01"))
    assert (
        qualify(
            cli, narrow, "rel-1", tmp_path / "q-expired", "--known-issues", str(issues)
        ).returncode
        == 1
    )


def test_pass_to_partial_is_lost_coverage(cli, tmp_path):
    # features.dtype.uint16 is partial on this host's torch (no add for uint16). The baseline is
    # the same run as another host measured it, passing: exported from a scratch store, its
    # verdict set to pass, imported here (the store's own import path)
    full = job(tmp_path, "rel-dtype", ["selftest.pass"])
    full.write_text(full.read_text() + "- name: features\n  checks: [features.dtype.uint16]\n")
    scratch = tmp_path / "scratch.sqlite"
    proc = cli(
        "run", "--job", str(full), "--executor", "host", "--no-matrix", "--no-gate", db=scratch
    )
    assert proc.returncode == 0, proc.stderr
    (run,) = json.loads(cli("results", "list", "--json", db=scratch).stdout)
    exported = tmp_path / "run.json"
    assert cli("results", "export", run["run"], "--out", str(exported), db=scratch).returncode == 0
    data = json.loads(exported.read_text())
    (res,) = [r for r in data["results"] if r["check"][0] == "features.dtype.uint16"]
    assert res["status"] == "partial", res
    res["status"], res["message"] = "pass", ""
    exported.write_text(json.dumps(data))
    proc = cli("results", "import", str(exported))
    assert proc.returncode == 0, proc.stderr
    assert cli("baseline", "set", "rel-dtype", run["run"]).returncode == 0

    proc = qualify(cli, full, "rel-dtype", tmp_path / "q-partial")
    assert proc.returncode == 1, proc.stderr + proc.stdout
    assert "1 coverage lost" in proc.stderr and "features.dtype.uint16" in proc.stderr
    cases = junit_cases(tmp_path / "q-partial" / "report.junit.xml")
    assert cases["features.dtype.uint16"][0] == "failure"
    assert cases["selftest.pass"][0] == "passed"


def test_diff_lists_lost_coverage_first_and_gates_only_with_gate_coverage(cli, tmp_path):
    full = job(tmp_path, "d-full", ["selftest.pass"], {"ok": 0})
    narrow = job(tmp_path, "d-narrow", ["selftest.pass"])
    for path in (full, narrow):
        assert cli("run", "--job", str(path), "--executor", "host", "--no-matrix").returncode == 0
    runs = {r["job"]: r["run"] for r in json.loads(cli("results", "list", "--json").stdout)}
    base, head = runs["d-full"], runs["d-narrow"]

    proc = cli("diff", base, head)
    assert proc.returncode == 0, proc.stderr + proc.stdout  # listed, not gated
    assert proc.stdout.index("Coverage lost (1)") < proc.stdout.index("environments:")
    assert "not gated: no --gate-coverage" in proc.stdout

    proc = cli("diff", base, head, "--gate-coverage")
    assert proc.returncode == 1 and "1 coverage lost" in proc.stderr
    data = json.loads(cli("diff", base, head, "--gate-coverage", "--format", "json").stdout)
    assert data["gate"]["exit_code"] == 1
    assert [(r["reason"], r["gates"], r["count"]) for r in data["gate"]["reasons"]] == [
        ("coverage_lost", True, 1)
    ]
    md = cli("diff", base, head, "--gate-coverage", "--format", "md").stdout
    assert md.index("## Coverage lost (1)") < md.index("<details>")
    junit = tmp_path / "d.xml"
    assert (
        cli(
            "diff", base, head, "--gate-coverage", "--format", "junit", "--out", str(junit)
        ).returncode
        == 1
    )
    assert junit_cases(junit)["command.ok"][0] == "failure"
