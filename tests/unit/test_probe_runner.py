"""The probe runner as it runs in an image: a real subprocess, real signals."""

import json
import subprocess
import sys

from valorch_probe import MARKER


def run_probe(probe_dir, *args, timeout=120):
    proc = subprocess.run(
        [sys.executable, "-m", "valorch_probe", *args],
        cwd=probe_dir,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={"PYTHONPATH": str(probe_dir), "PATH": "/usr/bin:/bin"},
    )
    records = [
        json.loads(line[len(MARKER) :])
        for line in proc.stdout.splitlines()
        if line.startswith(MARKER)
    ]
    return proc, records


def test_crash_isolation_abort_segv_hang(probe_dir):
    proc, records = run_probe(probe_dir, "run", "--suite", "selftest", "--deadline", "3")
    assert proc.returncode == 0
    results = {r["check"]: r for r in records if r["type"] == "result"}
    assert results["selftest.pass"]["status"] == "pass"
    assert results["selftest.abort"]["status"] == "crash"
    assert "SIGABRT" in results["selftest.abort"]["message"]
    assert "about to abort" in results["selftest.abort"]["log"]
    assert (
        results["selftest.segv"]["status"] == "crash"
        and "SIGSEGV" in results["selftest.segv"]["message"]
    )
    assert (
        results["selftest.hang"]["status"] == "timeout"
        and "about to hang" in results["selftest.hang"]["log"]
    )
    assert results["selftest.fail"]["status"] == "fail"
    assert results["selftest.after"]["status"] == "pass"
    # forged lines printed by a check never become results
    assert "forged" not in results and results["selftest.noise"]["status"] == "pass"
    # one worker, plus one fresh worker after each of the three deaths
    assert next(r for r in records if r["type"] == "end")["workers"] == 4
    assert results["selftest.after"]["metrics"]["pid"] != results["selftest.pass"]["metrics"]["pid"]


def test_attempts_make_retries_visible(probe_dir):
    _, records = run_probe(
        probe_dir,
        "run",
        "--suite",
        "selftest",
        "--check",
        "selftest.fail",
        "--check",
        "selftest.abort",
        "--attempts",
        "2",
    )
    got = [(r["check"], r["attempt"], r["status"]) for r in records if r["type"] == "result"]
    assert got == [
        ("selftest.abort", 1, "crash"),
        ("selftest.abort", 2, "crash"),
        ("selftest.fail", 1, "fail"),
        ("selftest.fail", 2, "fail"),
    ]


def test_check_filter_and_missing_framework(probe_dir):
    _, records = run_probe(
        probe_dir,
        "run",
        "--suite",
        "smoke",
        "--check",
        "env.version.*",
        "--expect",
        json.dumps({"pytorch": "2.4", "python": "3"}),
    )
    results = {r["check"]: r for r in records if r["type"] == "result"}
    assert set(results) == {c for c in results if c.startswith("env.version.")}
    assert results["env.version.python"]["status"] == "pass"
    assert results["env.version.rocm"]["status"] == "skip"


def test_bad_suite_is_a_fatal_record(probe_dir):
    proc, records = run_probe(probe_dir, "run", "--suite", "nope")
    assert proc.returncode == 2 and records[0]["type"] == "fatal"


def test_probe_is_stdlib_only(probe_dir):
    """The probe must import nothing from the orchestrator nor third-party packages."""
    code = (
        "import sys, valorch_probe.loader as r; r.catalog(); "
        "bad = [m for m in sys.modules if m.split('.')[0] in ('orchestrator','pydantic','yaml','torch')]; "
        "print(bad)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=probe_dir,
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(probe_dir)},
    )
    assert out.stdout.strip() == "[]", out.stderr
