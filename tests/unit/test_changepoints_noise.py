"""Change points, drift and the noise helpers on histories whose truth is known."""

import math
import random

import pytest

from orchestrator.regression import changepoints as cp
from orchestrator.regression import noise


def series(level, n=60, sigma=0.01, seed=1):
    rng = random.Random(seed)
    return [level(i) * (1 + rng.gauss(0, sigma)) for i in range(n)]


def test_flat_history_has_no_shift():
    assert all(not cp.analyse(series(lambda i: 1.0, 100, seed=s), 0.05).shifts for s in range(50))


def test_one_step_is_found_where_it_happened():
    (s,) = cp.analyse(series(lambda i: 1.0 if i < 30 else 1.2), 0.05).shifts
    assert (s.kind, s.direction, s.start, s.end) == ("step", "slower", 30, 30)
    assert s.ratio == pytest.approx(1.2, rel=0.02)


def test_sub_threshold_steps_add_up_to_a_drift():
    """asv#932: 1.00 → 1.04 → 1.08, each step under the 5 % threshold."""
    values = series(lambda i: (1.0, 1.04, 1.08)[i // 20], 60, sigma=0.005)
    (s,) = cp.analyse(values, 0.05).shifts
    assert s.kind == "drift" and s.direction == "slower" and s.steps == 2
    assert s.start == 20 and s.end == 40 and s.ratio == pytest.approx(1.08, rel=0.01)


def test_slow_ramp_is_found_and_a_single_spike_is_not():
    ramp = cp.analyse(series(lambda i: 1.0 + 0.003 * i, 60), 0.05).shifts
    assert ramp and all(s.direction == "slower" for s in ramp)
    spiky = series(lambda i: 1.0, 60)
    spiky[30] *= 40  # one run on a busy host
    assert not cp.analyse(spiky, 0.05).shifts


def test_bigger_is_better_flips_the_direction():
    (s,) = cp.analyse(
        series(lambda i: 100.0 if i < 30 else 80.0), 0.05, bigger_is_better=True
    ).shifts
    assert s.direction == "slower" and s.ratio == pytest.approx(1.25, rel=0.02)
    (s,) = cp.analyse(series(lambda i: 1.0 if i < 30 else 0.8), 0.05).shifts
    assert s.direction == "faster"


def test_binary_segmentation_finds_each_true_change():
    rng = random.Random(7)
    for _ in range(30):
        cuts = sorted(rng.sample(range(8, 92), 2))
        if cuts[1] - cuts[0] < 8:
            continue
        y = [(0.0, 0.3, 0.1)[sum(i >= c for c in cuts)] + rng.gauss(0, 0.02) for i in range(100)]
        found = cp.binseg(y, 4 * 0.02**2 * 4.6)
        assert len(found) == 2 and all(
            abs(f - c) <= 1 for f, c in zip(found, cuts, strict=False)
        ), (found, cuts)
    assert cp.binseg([1.0 + 0.01 * rng.gauss(0, 1) for _ in range(100)], 4 * 0.01**2 * 4.6) == []


def test_benjamini_hochberg():
    q = noise.benjamini_hochberg([0.01, 0.04, 0.03, 0.005])
    assert q == pytest.approx([0.02, 0.04, 0.04, 0.02])
    assert noise.benjamini_hochberg([]) == []


def test_noise_helpers():
    assert noise.cv([1.0, 1.0, 1.0]) == 0.0 and noise.cv([1.0]) is None
    quiet = [1.0 + 0.001 * (i % 5) for i in range(50)]
    loud = [1.0 + 0.05 * (i % 5) for i in range(50)]
    se_quiet, se_loud = noise.ratio_se(quiet, quiet), noise.ratio_se(loud, loud)
    assert se_quiet is not None and se_loud is not None
    assert noise.detectable(se_quiet, 0.05) < noise.detectable(se_loud, 0.05)
    assert 0.045 < noise.detectable(se_quiet, 0.05) <= 0.05
    se_runs = noise.ratio_se(quiet, quiet, run_sigma=0.02)
    assert se_runs is not None and noise.detectable(se_runs, 0.05) > 0.07  # run-to-run noise costs
    assert noise.noisy({"cpu_pressure": 0.5}) and not noise.noisy(
        {"cpu_pressure": 0.01, "host_load_before": 9}
    )
    assert noise.noisy({"host_load_before": 5, "host_load_after": 5, "host_cpus": 2})
    assert not noise.noisy(
        {"host_load_before": 0.5, "host_load_after": 0.7, "host_cpus": 2}
    ) and not noise.noisy({})


def _runs(shift, seed, n=30, cv=0.01):
    rng = random.Random(seed)
    return (
        [1e-3 * math.exp(rng.gauss(0, cv)) for _ in range(n)],
        [1e-3 * shift * math.exp(rng.gauss(0, cv)) for _ in range(n)],
    )


def test_a_change_of_the_threshold_size_is_found_and_a_a_is_not():
    from orchestrator.regression import rule as diff

    found = sum(
        diff._timing_kind(diff.compare_timing(*_runs(1.05, s), False, 0.05)) == diff.SLOWER
        for s in range(100)
    )
    false = sum(
        diff._timing_kind(diff.compare_timing(*_runs(1.0, s), False, 0.05)) != diff.SAME
        for s in range(100)
    )
    assert found >= 90 and false <= 1


def test_known_run_to_run_noise_guards_against_run_offsets():
    from orchestrator.regression import rule as diff

    base, head = _runs(1.046, 3)  # a 4.6 % offset between two runs: could be the 5 % threshold
    assert diff._timing_kind(diff.compare_timing(base, head, False, 0.05)) == diff.SLOWER
    t = diff.compare_timing(
        base, head, False, 0.05, run_sigma=0.03
    )  # A/A: runs differ by ~3 % anyway
    assert diff._timing_kind(t) == diff.SAME and not t.significant


def _pooled_sides(shift: float, runs: int, sigma: float, rng: random.Random):
    from orchestrator.regression import rule as diff

    def side(name: str, factor: float) -> tuple:
        out = []
        for r in range(runs):
            offset = factor * math.exp(
                rng.gauss(0, sigma)
            )  # the run's own offset: run-to-run noise
            out.append(
                diff.Obs(
                    "img",
                    "k.t",
                    "pass",
                    run=f"{name}{r}",
                    samples=tuple(1e-3 * offset * math.exp(rng.gauss(0, 0.01)) for _ in range(100)),
                )
            )
        return diff.Side(name, "latest", tuple(out))

    return side("base", 1.0), side("head", shift)


def test_pooled_runs_see_a_5_percent_change_through_run_to_run_noise():
    """2.7 % run-to-run noise (the noisiest ordinary kernel on the reference VM): one run a
    side cannot tell 5 % from noise; ten runs pooled a side find it nine times in ten or
    more, and A/A pairs stay under 1 % false regressions."""
    from orchestrator.regression import rule as diff

    rng, sigma = random.Random(7), 0.027
    noise_of = {("img", "k.t"): sigma}

    def counted(shift: float, runs: int, n: int = 100) -> int:
        return sum(
            diff.compare(*_pooled_sides(shift, runs, sigma, rng), run_noise=noise_of).regressed
            for _ in range(n)
        )

    assert counted(1.05, 1) <= 50
    assert counted(1.05, 10) >= 90
    assert counted(1.0, 10) <= 1
    t = diff.compare(*_pooled_sides(1.05, 10, sigma, rng), run_noise=noise_of).changes[0].timing
    assert (t.runs_base, t.runs_head, t.n_base) == (10, 10, 1000)
    assert (
        t.detectable
        < 0.05
        < diff.compare(*_pooled_sides(1.05, 1, sigma, rng), run_noise=noise_of)
        .changes[0]
        .timing.detectable
    )


def test_penalty_calibration_on_a_a_histories():
    """k = 4: under 1 % of A/A histories (100 runs, 2 % run-to-run noise) show a shift,
    and a 5 % step in the same noise is found at least nine times in ten."""
    rng = random.Random(5)
    aa = sum(
        bool(cp.analyse([math.exp(rng.gauss(0, 0.02)) for _ in range(100)], 0.05).shifts)
        for _ in range(300)
    )
    step = sum(
        any(
            s.direction == "slower"
            for s in cp.analyse(
                [(1.0 if i < 50 else 1.05) * math.exp(rng.gauss(0, 0.02)) for i in range(100)], 0.05
            ).shifts
        )
        for _ in range(100)
    )
    assert aa <= 3 and step >= 90


def test_reports_print_noise_per_check_and_flag_a_noisy_host():
    import json

    from orchestrator.regression import rule
    from orchestrator.render.diff import diff_html, diff_json, diff_md

    b1, h1 = _runs(1.0, 1)
    b2, h2 = _runs(1.5, 2)
    base = rule.Side(
        "b",
        "run",
        (
            rule.Obs("img", "k.quiet", "pass", samples=tuple(b1)),
            rule.Obs("img", "k.busy", "pass", samples=tuple(b2)),
        ),
    )
    head = rule.Side(
        "h",
        "run",
        (
            rule.Obs("img", "k.quiet", "pass", samples=tuple(h1)),
            rule.Obs("img", "k.busy", "pass", samples=tuple(h2), noisy=True),
        ),
    )
    report = rule.compare(base, head)
    busy = next(c for c in report.changes if c.check == "k.busy")
    assert busy.kind == rule.NOISE and busy.note == "noisy host" and not report.regressed
    md = diff_md(report)
    assert "## Noise per timed check (2)" in md and "noisy host" in md and "detects ≥" in md
    assert "| img | `k.quiet` |" in md
    data = json.loads(diff_json(report))
    assert data["noisy_host"] == 1 and {n["check"] for n in data["noise"]} == {"k.quiet", "k.busy"}
    assert all(n["cv_base"] is not None and n["smallest_detectable"] for n in data["noise"])
    html = diff_html(report)
    assert 'id="noisy-host"' in html and 'id="noise"' in html and "\u274c" not in html
