"""Fisher's exact test of readiness, against scipy on the same tables; Sippy's statuses on
known counts; nothing to judge is never ready."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import fisher_exact

from orchestrator.regression import readiness as rd

TABLES = [  # (candidate passes, runs, basis passes, runs)
    (3, 6, 6, 6),
    (0, 4, 4, 4),
    (18, 20, 20, 20),
    (95, 100, 100, 100),
    (9, 10, 10, 10),
    (5, 10, 5, 10),
    (10, 10, 0, 10),
    (40, 50, 49, 50),
    (0, 1, 1, 1),
    (7, 30, 12, 14),
]


@pytest.mark.parametrize("table", TABLES)
def test_one_sided_p_is_scipys_less_on_the_same_table(table):
    cp, cn, bp, bn = table
    want = fisher_exact([[cp, cn - cp], [bp, bn - bp]], alternative="less")[1]
    assert rd.fisher_less(cp, cn, bp, bn) == pytest.approx(want, rel=1e-9)


def test_known_exact_values():
    assert rd.fisher_less(3, 6, 6, 6) == pytest.approx(84 / 924)
    assert rd.fisher_less(0, 4, 4, 4) == pytest.approx(1 / 70)
    assert rd.fisher_less(6, 6, 6, 6) == 1.0


@given(st.integers(0, 40), st.integers(0, 40), st.integers(0, 40), st.integers(0, 40))
@settings(max_examples=200, deadline=None)
def test_matches_scipy_on_any_table(cp, cf, bp, bf):
    if cp + cf == 0 or bp + bf == 0:
        return
    want = fisher_exact([[cp, cf], [bp, bf]], alternative="less")[1]
    assert rd.fisher_less(cp, cp + cf, bp, bp + bf) == pytest.approx(want, rel=1e-9, abs=1e-300)


def count(p, n):
    return rd.Count(p, n)


@pytest.mark.parametrize(
    ("cand", "basis", "want"),
    [  # Sippy's buildFisherExactTestStats on the same counts
        ((0, 4), (4, 4), rd.EXTREME_REGRESSION),
        ((0, 3), (100, 100), rd.EXTREME_REGRESSION),
        ((2, 4), (4, 4), rd.NOT_SIGNIFICANT),  # 2 failures, fewer than 3
        ((91, 100), (100, 100), rd.SIGNIFICANT_REGRESSION),  # a 9-point drop
        ((96, 100), (100, 100), rd.NOT_SIGNIFICANT),  # within the pity of 5 points
        ((0, 0), (4, 4), rd.MISSING_SAMPLE),
        ((0, 4), (0, 0), rd.MISSING_BASIS),
        ((0, 0), (0, 0), rd.MISSING_BOTH),
        ((97, 100), (50, 100), rd.IMPROVEMENT),
        ((1, 4), (0, 4), rd.NOT_SIGNIFICANT),
    ],
)
def test_classify_is_sippys_status(cand, basis, want):
    assert rd.classify(count(*cand), count(*basis))[0] == want


def test_the_correction_never_hides_an_extreme_regression():
    cells = [
        rd.Cell("a", rd.Env("img"), count(0, 4), count(4, 4)),
        *[rd.Cell(f"x{i}", rd.Env("img"), count(1, 4), count(4, 4)) for i in range(30)],
    ]
    got = rd.judge(cells, rd.Options(correction="bh"))
    assert got[0].status == rd.EXTREME_REGRESSION and got[0].q > 0.05


def test_nothing_to_judge_is_never_ready_unless_allowed():
    none = rd.decide([], 0, 4)
    assert none.exit_code == 1 and "--allow-empty" in none.reasons[0]
    assert rd.decide([], 0, 4, rd.Options(allow_empty=True)).exit_code == 0
    untested = rd.decide([rd.Cell("a", rd.Env("img"), count(0, 0), count(0, 0))], 3, 3)
    assert untested.exit_code == 1 and untested.untested == 1 and untested.cells == ()
