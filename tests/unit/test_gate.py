"""The gate (regression/gate.py): which cells of a report fail it, in what order, and what
the flags allow. Pure: reports built from observations."""

from datetime import date

from orchestrator.regression import gate
from orchestrator.regression import rule as diff
from orchestrator.regression.rule import Obs, Side, compare
from orchestrator.regression.waivers import Waiver
from orchestrator.render.diff import diff_junit, diff_md

TIGHT = [1.00, 1.01, 0.99, 1.002, 0.998, 1.005, 0.995, 1.003, 0.997, 1.001, 0.999, 1.004]


def side(label, *obs):
    return Side(label, "run", tuple(obs), runs=(label,), hosts=("h1",))


def o(check, status="pass", **kw):
    return Obs(env="img", check=check, status=status, **kw)


def reasons(verdict):
    return [(r.code, r.gates, [c.check for c in r.changes]) for r in verdict.reasons]


BASE = side(
    "a",
    o("ok"),
    o("new.fail"),
    o("old.fail", "fail"),
    o("gone"),
    o("partial"),
    o("slow", samples=tuple(TIGHT)),
)
HEAD = side(
    "b",
    o("ok"),
    o("new.fail", "crash"),
    o("old.fail", "fail"),
    o("partial", "partial", message="half"),
    o("slow", samples=tuple(s * 1.5 for s in TIGHT)),
    o("added.fail", "timeout"),
)


def test_every_unexcused_failure_lost_coverage_and_timing_regression_gates_in_order():
    v = gate.decide(compare(BASE, HEAD))
    assert reasons(v) == [
        ("still_failing", True, ["old.fail"]),
        ("failing", True, ["new.fail", "added.fail"]),
        ("slower", True, ["slow"]),
        ("coverage_lost", True, ["gone", "partial"]),
    ]
    assert v.exit_code == 1 and not v.qualified
    assert v.headline() == (
        "not qualified: 1 still failing; 2 failing (1 regressed, 1 new failure); 1 slower; "
        "2 coverage lost"
    )
    assert v.failing_cells() == {
        ("img", k) for k in ("old.fail", "new.fail", "added.fail", "slow", "gone", "partial")
    }


def test_flags_allow_still_failing_and_lost_coverage_but_never_new_failures():
    v = gate.decide(compare(BASE, HEAD), gate_coverage=False, allow_known_failures=True)
    assert [(code, gates) for code, gates, _ in reasons(v)] == [
        ("still_failing", False),
        ("failing", True),
        ("slower", True),
        ("coverage_lost", False),
    ]
    assert v.exit_code == 1
    only_allowed = compare(side("a", o("x", "fail"), o("y")), side("b", o("x", "fail")))
    v = gate.decide(only_allowed, gate_coverage=False, allow_known_failures=True)
    assert v.exit_code == 0 and v.qualified and len(v.reasons) == 2
    assert "[not gated: --allow-known-failures]" in v.reasons[0].line()
    assert (
        gate.decide(
            only_allowed, gate_coverage=False, allow_known_failures=True, infra_errors=True
        ).exit_code
        == 3
    )


def test_known_issues_excuse_failures_tampering_and_missing_checks():
    issue = Waiver("*", "tracked upstream", until=date(2999, 1, 1))

    def match(env, backend, check, status, host):
        return (
            (issue, False)
            if (check, status)
            in {("f", "fail"), ("t", "error"), ("m", "missing"), ("p", "partial")}
            else None
        )

    base = side("a", o("f"), o("t"), o("m"), o("p"))
    head = side("b", o("f", "fail"), o("t", "error", tampered=True), o("p", "partial"))
    report = compare(base, head, match=match)
    assert {c.check: c.kind for c in report.changes} == dict.fromkeys("ftmp", diff.EXPECTED)
    v = gate.decide(report)
    assert v.exit_code == 0 and v.excused == 4 and v.reasons == ()
    junit = diff_junit(report, v)
    assert (
        junit.count('<skipped message="waived: tracked upstream"') == 4 and "<failure" not in junit
    )


def test_tampered_error_gates_and_a_plain_error_is_inconclusive():
    report = compare(
        side("a", o("t"), o("e")), side("b", o("t", "error", tampered=True), o("e", "error"))
    )
    v = gate.decide(report)
    assert reasons(v) == [("failing", True, ["t"])]
    assert (
        gate.decide(
            compare(side("a", o("e")), side("b", o("e", "error"))), infra_errors=True
        ).exit_code
        == 3
    )


def test_junit_and_markdown_follow_the_verdict():
    report = compare(BASE, HEAD)
    v = gate.decide(report, gate_coverage=False)
    junit = diff_junit(report, v)
    assert junit.count("<failure") == 4  # old.fail, new.fail, added.fail, slow
    assert 'type="still_failing"' in junit and "not gated: --allow-coverage-loss" in junit
    assert (
        "<system-out>partial: half (coverage lost, not gated: --allow-coverage-loss)</system-out>"
        in junit
    )
    same = compare(side("a", o("p", "partial")), side("b", o("p", "partial", message="half")))
    assert "<system-out>partial: half</system-out>" in diff_junit(same, gate.decide(same))
    md = diff_md(report, v)
    verdict, rest = md.split("<details>")
    assert (
        verdict.index("## Failures (3)")
        < verdict.index("## Regressions (1)")
        < verdict.index("## Coverage lost")
    )
    assert verdict.index("`old.fail`") < verdict.index("`new.fail`")  # still failing first
    assert (
        "img: old.fail" in verdict.split("## Failures")[0]
    )  # the verdict block names the first checks
    assert "## Status regressions" not in rest  # a row is shown once


def test_reason_line_names_the_first_checks_only():
    base = side("a", *(o(f"c{i}") for i in range(9)))
    v = gate.decide(compare(base, side("b", o("c0"))))
    (r,) = v.reasons
    assert r.line() == (
        "8 coverage lost (missing, or pass → unsupported/partial/skip): img: c1, img: c2, img: c3, "
        "img: c4, img: c5, … (+3)"
    )


def test_a_missing_cell_of_a_published_baseline_is_no_check_the_head_can_lose():
    from types import SimpleNamespace as Ns

    from orchestrator.services.diff import matrix_side

    mv = Ns(
        meta={},
        cells=[
            Ns(column="img", row="ran", statuses=["pass"], verdict="pass", meta={}, runs=None),
            Ns(column="img", row="never", statuses=[], verdict="missing", meta={}, runs=None),
        ],
    )
    base = matrix_side("v1", "baseline", mv)
    assert [(o.check, o.status) for o in base.observations] == [("ran", "pass")]
    v = gate.decide(compare(base, side("b", o("ran"))))
    assert v.exit_code == 0 and v.reasons == ()
