"""Fisher's exact test of readiness, against scipy on the same tables; the minimum sample;
identical pass rates are never red."""

from __future__ import annotations

import math

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


@pytest.mark.parametrize(
    ("alpha", "n"), [(0.05, 4), (0.01, 5), (0.2, 2), (0.5, 2), (0.6, 1), (0.001, 7)]
)
def test_minimum_runs_is_the_first_n_whose_most_extreme_table_is_significant(alpha, n):
    assert rd.min_runs(alpha) == n
    assert 1 / math.comb(2 * n, n) < alpha
    if n > 1:
        assert 1 / math.comb(2 * (n - 1), n - 1) >= alpha
        # the most extreme table one run short is not significant either
        assert rd.fisher_less(0, n - 1, n - 1, n - 1) >= alpha


def cell(cp, cn, bp, bn, check="c"):
    return rd.Cell(check, rd.Env("img"), rd.Count(cp, cn), rd.Count(bp, bn))


def test_states_red_green_and_not_enough_runs():
    got = rd.judge([cell(0, 8, 8, 8, "a"), cell(8, 8, 8, 8, "b"), cell(0, 3, 30, 30, "c")])
    assert [c.state for c in got] == [rd.RED, rd.GREEN, rd.THIN]
    assert got[0].p == pytest.approx(1 / math.comb(16, 8))
    assert "3 counted run(s), fewer than 4" in got[2].reason


def test_red_cells_are_corrected_over_the_cells_tested():
    """p = 0.0406 is red alone, but not among 20 cells whose others are identical."""
    alone = rd.judge([cell(5, 10, 10, 10)])
    assert alone[0].p == pytest.approx(fisher_exact([[5, 5], [10, 0]], alternative="less")[1])
    many = rd.judge([cell(7, 10, 10, 10)] + [cell(10, 10, 10, 10, f"x{i}") for i in range(19)])
    assert rd.judge([cell(7, 10, 10, 10)])[0].p < 0.2
    assert many[0].state == rd.GREEN and many[0].q > many[0].p


@given(
    st.lists(
        st.tuples(st.integers(1, 30), st.integers(0, 30), st.integers(1, 4)),
        min_size=1,
        max_size=12,
    ),
    st.floats(0.001, 0.5),
)
@settings(max_examples=200, deadline=None)
def test_identical_pass_rates_are_never_red(specs, alpha):
    """Whatever the sizes (the basis a multiple of the candidate) and however many cells."""
    cells = []
    for i, (n, k, mult) in enumerate(specs):
        passed = min(k, n)
        cells.append(cell(passed, n, passed * mult, n * mult, f"c{i}"))
    assert all(c.state != rd.RED for c in rd.judge(cells, alpha))


@pytest.mark.parametrize("alpha", [0, 1, -0.1, 1.5])
def test_alpha_outside_the_open_interval_is_refused(alpha):
    with pytest.raises(ValueError):
        rd.min_runs(alpha)
