from datetime import date

import pytest

from orchestrator.regression import rule as diff
from orchestrator.regression.rule import Obs, Side, compare
from orchestrator.regression.waivers import Waiver
from orchestrator.render.diff import RENDERERS, diff_json, diff_md

TIGHT = [1.00, 1.01, 0.99, 1.002, 0.998, 1.005, 0.995, 1.003, 0.997, 1.001, 0.999, 1.004]
WIDE = [0.3, 2.5, 0.8, 1.9, 0.5, 1.4, 2.9, 0.6, 1.0, 2.2]


def side(label, *obs, kind="run"):
    return Side(
        label, kind, tuple(obs), runs=(label,), digests=(("img", "sha256:" + label),), hosts=("h1",)
    )


def o(check, status="pass", env="img", **kw):
    return Obs(env=env, check=check, status=status, **kw)


def one(base_obs, head_obs, **kw):
    report = compare(side("a", *base_obs), side("b", *head_obs), **kw)
    assert len(report.changes) == 1
    return report, report.changes[0]


def scaled(samples, k):
    return tuple(s * k for s in samples)


def test_three_percent_shift_is_not_a_regression():
    report, c = one([o("k", samples=tuple(TIGHT))], [o("k", samples=scaled(TIGHT, 1.03))])
    assert c.kind == diff.SAME and c.timing.ratio == pytest.approx(1.03)
    assert c.timing.significant  # significant, but under the 5 % threshold
    assert not report.regressed


def test_twenty_percent_shift_with_tight_samples_is_a_regression():
    report, c = one([o("k", samples=tuple(TIGHT))], [o("k", samples=scaled(TIGHT, 1.2))])
    assert c.kind == diff.SLOWER and c.timing.method == "mwu" and c.timing.p < 0.01
    assert report.regressed


def test_twenty_percent_shift_within_wide_noise_is_tilde():
    report, c = one([o("k", samples=tuple(WIDE))], [o("k", samples=scaled(WIDE, 1.2))])
    assert c.kind == diff.NOISE and c.mark == "~"
    assert c.timing.ratio == pytest.approx(1.2) and c.timing.p > 0.01
    assert not report.regressed


def test_faster_is_improved_and_bigger_is_better_flips_direction():
    _, c = one([o("k", samples=tuple(TIGHT))], [o("k", samples=scaled(TIGHT, 0.8))])
    assert c.kind == diff.FASTER and not _.regressed
    report, c = one(
        [o("k", samples=tuple(TIGHT), bigger_is_better=True)],
        [o("k", samples=scaled(TIGHT, 0.8), bigger_is_better=True)],
    )
    assert c.kind == diff.SLOWER and c.timing.ratio == pytest.approx(1.25) and report.regressed


def test_per_check_threshold_overrides_default():
    _, c = one([o("k", samples=tuple(TIGHT))], [o("k", samples=scaled(TIGHT, 1.2), threshold=0.5)])
    assert c.kind == diff.SAME


def test_few_samples_use_bootstrap_intervals():
    base = (1.0, 1.01, 0.99, 1.0, 1.005)
    _, c = one([o("k", samples=base)], [o("k", samples=scaled(base, 1.5))])
    assert c.timing.method == "bootstrap" and c.kind == diff.SLOWER
    wide = (0.2, 3.0, 1.0, 0.5, 2.0)
    _, c = one([o("k", samples=wide)], [o("k", samples=scaled(wide, 1.2))])
    assert c.timing.method == "bootstrap" and c.kind == diff.NOISE


def test_changed_check_version_is_not_comparable():
    _, c = one([o("k", version=1)], [o("k", "fail", version=2)])
    assert c.kind == diff.NOT_COMPARABLE and c.mark == "x" and not _.regressed


@pytest.mark.parametrize(
    "base,head,kind",
    [
        ("pass", "fail", diff.REGRESSED),
        ("pass", "crash", diff.REGRESSED),
        ("pass", "timeout", diff.REGRESSED),
        ("fail", "pass", diff.FIXED),
        ("crash", "pass", diff.FIXED),
        ("pass", "unsupported", diff.COVERAGE_LOST),
        ("pass", "skip", diff.COVERAGE_LOST),
        ("skip", "pass", diff.COVERAGE_GAINED),
        ("pass", "error", diff.INCONCLUSIVE),
        ("error", "fail", diff.INCONCLUSIVE),
        ("fail", "fail", diff.SAME),
        ("pass", "pass", diff.SAME),
        ("fail", "crash", diff.CHANGED),
    ],
)
def test_status_rule_table(base, head, kind):
    report, c = one([o("k", base)], [o("k", head)])
    assert c.kind == kind
    assert report.regressed == (kind == diff.REGRESSED)


def test_mixed_attempts_in_head_are_flaky_not_regressed():
    report, c = one([o("k")], [o("k", "fail", attempt=1), o("k", "pass", attempt=2)])
    assert c.kind == diff.FLAKY and c.head == "flaky" and not report.regressed


def test_added_and_removed_checks_are_coverage():
    report = compare(side("a", o("old"), o("both")), side("b", o("both"), o("new")))
    kinds = {c.check: c.kind for c in report.changes}
    assert kinds == {"old": diff.COVERAGE_LOST, "both": diff.SAME, "new": diff.COVERAGE_GAINED}
    assert not report.regressed


def test_known_issue_makes_a_failure_expected_until_it_expires():
    issue = Waiver("k", "upstream bug", url="https://example.org/1", until=date(2030, 1, 1))

    def live(env, backend, check, status, host):
        return (issue, False) if check == "k" and status == "fail" else None

    report, c = one([o("k")], [o("k", "fail")], match=live)
    assert c.kind == diff.EXPECTED and c.issue == issue and not report.regressed
    report, c = one([o("k")], [o("k", "crash")], match=live)
    assert c.kind == diff.REGRESSED  # the entry expects fail, not crash
    report, c = one([o("k")], [o("k", "fail")], match=lambda *a: (issue, True))
    assert c.kind == diff.REGRESSED and "expired on 2030-01-01" in c.note


def test_single_environments_are_paired_by_name():
    report = compare(side("a", o("k", env="torch1")), side("b", o("k", "fail", env="torch2")))
    assert [(c.env, c.kind) for c in report.changes] == [("torch1 → torch2", diff.REGRESSED)]


def test_several_environments_match_by_name_and_geomean_per_environment():
    base = side(
        "a",
        o("k1", env="x", samples=tuple(TIGHT), backend="cpu"),
        o("k2", env="x", samples=tuple(TIGHT), backend="cpu"),
        o("k1", env="y"),
    )
    head = side(
        "b",
        o("k1", env="x", samples=scaled(TIGHT, 1.21), backend="cpu"),
        o("k2", env="x", samples=scaled(TIGHT, 1.0), backend="cpu"),
        o("k1", env="y"),
    )
    report = compare(base, head)
    assert report.geomean == (("x", "cpu", pytest.approx(1.1), 2),)
    assert report.counts[diff.SLOWER] == 1


def test_matrix_cell_flips():
    report = compare(
        side("a", o("k1"), o("k2", "fail")), side("b", o("k1", "fail"), o("k2", "crash"))
    )
    assert [(f.check, f.base, f.head) for f in report.flips] == [
        ("k1", "pass", "fail")
    ]  # fail→crash: same ❌


def test_renderers_carry_the_content():
    report = compare(
        side("base1", o("k.reg"), o("k.fix", "fail"), o("k.slow", samples=tuple(TIGHT))),
        side(
            "head1",
            o("k.reg", "crash", message="segfault"),
            o("k.fix"),
            o("k.slow", samples=scaled(TIGHT, 1.3)),
        ),
    )
    md = diff_md(report)
    assert "REGRESSED" in md and "`k.reg`" in md and "segfault" in md and "+30.0 %" in md
    import json

    data = json.loads(diff_json(report))
    assert data["regressed"] is True
    assert {c["check"]: c["kind"] for c in data["changes"]} == {
        "k.reg": "regressed",
        "k.fix": "fixed",
        "k.slow": "slower",
    }
    html = RENDERERS["html"](report)
    assert html.startswith("<!DOCTYPE html>") and 'data-kind="regressed"' in html
    junit = RENDERERS["junit"](report)
    assert 'failures="2"' in junit


def test_html_escapes_messages():
    report = compare(
        side("a", o("k")), side("b", o("k", "fail", message="<script>alert(1)</script>"))
    )
    html = RENDERERS["html"](report)
    assert "<script>alert" not in html and "&lt;script&gt;" in html
