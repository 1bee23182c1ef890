"""How run and qualify end, decided by the services (services/outcome.py): the exit code,
what decided it and the lines said. Pure: reports and verdicts built from observations, no CLI."""

from pathlib import Path

from orchestrator.regression import gate
from orchestrator.regression.rule import Obs, Side, compare
from orchestrator.services.qualify import Qualification
from orchestrator.services.run import RunReport


def run_report(**kw):
    fields = {"lines": (), "matrix_md": "", "json": [], "junit": "", "failed": False}
    fields.update({"infra_errors": False, "tested": 1, **kw})
    return RunReport(**fields)


def said(outcome):
    return [(s.tone, s.text) for s in outcome.said]


# run ------------------------------------------------------------------------------------------


def test_run_passes_with_nothing_to_say():
    o = run_report().outcome
    assert (o.code, o.kind, o.said, o.ok) == (0, "passed", (), True)


def test_a_failing_check_is_exit_1_with_the_gate_and_0_without():
    gated = run_report(failed=True).outcome
    assert (gated.code, gated.kind, gated.said) == (1, "failed", ())
    assert "failed" in gated.reason
    ungated = run_report(failed=True, gate=False).outcome
    assert (ungated.code, ungated.kind) == (0, "passed") and "--no-gate" in ungated.reason


def test_tampered_output_is_exit_1_with_the_gate_and_3_without_never_0():
    lines = ("run 1234abcd (host): selftest.a",)
    gated = run_report(protocol_errors=lines, failed=True, infra_errors=True).outcome
    assert (gated.code, gated.kind) == (1, "tampered")
    assert said(gated) == [
        (
            "error",
            "run 1234abcd (host): selftest.a: results tampered with or cut at the output cap; "
            "these checks are 'error'",
        )
    ]  # with the gate, the infrastructure line is not said (as before)
    ungated = run_report(protocol_errors=lines, gate=False, infra_errors=True).outcome
    assert (ungated.code, ungated.kind) == (3, "tampered")
    assert [t for t, _ in said(ungated)] == ["error", "warn"]


def test_infrastructure_errors_are_exit_3_and_say_the_checks_are_inconclusive():
    for gate_on in (True, False):
        o = run_report(infra_errors=True, gate=gate_on).outcome
        assert (o.code, o.kind) == (3, "infrastructure")
        assert said(o) == [
            ("warn", "infrastructure errors: the affected checks are 'error' (inconclusive)")
        ]
    # a gated failure outranks an infrastructure error (exit 1, as before)
    assert run_report(infra_errors=True, failed=True).outcome.code == 1


# qualify --------------------------------------------------------------------------------------


def side(label, *obs):
    return Side(label, "run", tuple(obs), runs=(label,), hosts=("h1",))


def o(check, status="pass"):
    return Obs(env="img", check=check, status=status)


BASE = side("a", o("ok"), o("flips"))
OUT = Path("results/q")


def qualification(head_status="pass", tampered=(), infra=False):
    report = compare(BASE, side("b", o("ok"), o("flips", head_status)))
    verdict = gate.decide(report, infra_errors=infra, tampered=tuple(tampered))
    return Qualification(("run line",), report, verdict, tuple(tampered), "v1")


def test_qualified_is_exit_0_and_says_so():
    out = qualification().outcome(OUT)
    assert (out.code, out.kind) == (0, "passed")
    assert said(out) == [("pass", "qualified against v1")]


def test_a_regression_is_exit_1_with_the_report_and_every_reason():
    out = qualification("fail").outcome(OUT)
    assert (out.code, out.kind, out.reason) == (1, "regressed", "1 failing (1 regressed)")
    assert said(out) == [
        ("fail", "qualification failed against v1; see results/q/report.md"),
        ("plain", "  1 failing in the candidate: img: flips"),
    ]


def test_tampered_output_fails_a_qualification_whose_verdict_passed():
    out = qualification(tampered=("selftest.flips",)).outcome(OUT)
    assert (out.code, out.kind) == (1, "tampered")
    assert said(out)[1] == (
        "plain",
        "  1 tampered with or cut at the output cap: selftest.flips",
    )


def test_infrastructure_errors_alone_are_exit_3_not_qualified():
    out = qualification(infra=True).outcome(OUT)
    assert (out.code, out.kind) == (3, "infrastructure")
    assert said(out) == [
        ("warn", "infrastructure errors: the affected checks are inconclusive; not qualified")
    ]
    # a regression outranks them: exit 1
    assert qualification("fail", infra=True).outcome(OUT).code == 1


def test_a_lost_notification_turns_qualified_into_exit_3_and_still_says_qualified():
    out = qualification().outcome(OUT, notified=False)
    assert (out.code, out.kind) == (3, "notification lost")
    assert said(out) == [("pass", "qualified against v1")]
    # a failed qualification stays exit 1 whether or not its notification arrived
    assert qualification("fail").outcome(OUT, notified=False).code == 1


# diff -----------------------------------------------------------------------------------------


def test_diff_ends_as_its_gate_and_its_notification_decide():
    from orchestrator.services.diff import ending, judge

    red = judge(compare(BASE, side("b", o("ok"), o("flips", "fail"))))
    out = ending(red)
    assert (out.code, out.kind) == (1, "regressed")
    assert said(out) == [("error", "gate failed: 1 failing (1 regressed)")]
    assert ending(red, notified=False).code == 1  # the gate outranks a lost notification
    green = judge(compare(BASE, side("b", o("ok"), o("flips"))))
    assert (ending(green).code, ending(green).said) == (0, ())
    lost = ending(green, notified=False)
    assert (lost.code, lost.kind, lost.said) == (3, "notification lost", ())


# the other commands that end on an answer ------------------------------------------------------


def test_verify_is_exit_1_when_no_attestation_satisfies_the_requirement():
    from orchestrator.ext.attest.policy import Considered, Decision, Reason
    from orchestrator.ext.attest.report import outcome

    tr = "https://in-toto.io/attestation/test-result/v0.1"
    ok = Considered("reg/x:sha256-a.att", tr, "decides", "2026-01-01T00:00:00Z", "measured", "")
    assert outcome(Decision("x", "sha256:a", "passed", "reg", (), (ok,), ok.where)).code == 0
    no = (Reason("result", "the newest test result is FAILED"),)
    bad = outcome(Decision("x", "sha256:a", "passed", "reg", no, (ok,), ok.where))
    assert (bad.code, bad.kind) == (1, "not verified") and "FAILED" in bad.reason


def test_images_check_is_exit_1_on_drift_unless_the_catalog_was_updated():
    from orchestrator.services.images import TagCheck, check_ending

    same = TagCheck("a", "r/a:1", "same")
    moved = TagCheck("b", "r/b:1", "moved")
    assert check_ending([same], updated=False).code == 0
    drift = check_ending([same, moved], updated=False)
    assert (drift.code, drift.kind) == (1, "drifted") and "b" in drift.reason
    assert check_ending([same, moved], updated=True).code == 0


def test_hosts_check_and_images_pull_are_exit_3_on_a_problem():
    from orchestrator.scheduling.plan import Unplaced
    from orchestrator.services.hosts import HostsCheck
    from orchestrator.services.pull import Outcome, pull_ending

    fine = HostsCheck(({"host": "a", "problems": []},), "ok")
    assert fine.outcome.code == 0
    sick = HostsCheck(({"host": "a", "problems": ["engine down"]},), "ok")
    assert sick.outcome.code == 3 and "a" in sick.outcome.reason
    assert HostsCheck((), "read-only").outcome.code == 3
    nowhere = HostsCheck(fine.hosts, "ok", (Unplaced("x", "no host can run image x", ""),))
    assert (nowhere.outcome.code, nowhere.as_json()["verdict"]["exit_code"]) == (3, 3)
    assert nowhere.outcome.said[0].text == "error: no host can run image x"
    assert pull_ending([Outcome("h", "a", None, None)]).code == 0
    failed = pull_ending([Outcome("h", "a", None, "no room", "no-room")])
    assert (failed.code, failed.kind) == (3, "infrastructure") and "a on h" in failed.reason


def test_commands_leave_exit_codes_to_the_services():
    """A command exits through common.end_with (the service's Outcome); the literal exits
    left are a signal's (signals.py) and an interrupted push's 130."""
    import re

    root = Path(__file__).resolve().parents[2] / "orchestrator" / "commands"
    found = {
        f"{p.name}: {m}"
        for p in root.glob("*.py")
        if p.name != "signals.py"
        for m in re.findall(r"typer\.Exit\((\d+)\)", p.read_text())
        if m != "0"
    }
    assert found == {"results.py: 130"}, found


def test_a_run_that_tested_nothing_is_exit_1_naming_why_unless_allowed():
    why = ("3 checks: 2 skip, 1 unsupported", "smoke.device: skip: no GPU")
    empty = run_report(tested=0, untested=why).outcome
    assert (empty.code, empty.kind) == (1, "nothing tested")
    assert empty.reason == "nothing was tested: 3 checks: 2 skip, 1 unsupported"
    assert ("plain", "  smoke.device: skip: no GPU") in said(empty)
    assert any("--allow-empty" in text for _tone, text in said(empty))
    allowed = run_report(tested=0, untested=why, allow_empty=True).outcome
    assert (allowed.code, allowed.kind) == (0, "passed") and "--allow-empty" in allowed.reason
    # infrastructure errors still decide first (exit 3): an empty run of a broken host
    assert run_report(tested=0, infra_errors=True).outcome.code == 3
