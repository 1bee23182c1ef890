import math
import random

import pytest

from orchestrator.regression import stats


def test_mwu_fully_separated_10_vs_10():
    # U = 0, mu = 50, sigma = sqrt(10*10*21/12) = 13.229; z = (50 - 0.5)/13.229 = 3.7418; p = erfc(z/sqrt2)
    p = stats.mann_whitney_u(list(range(10)), list(range(10, 20)))
    assert p == pytest.approx(math.erfc(3.7418 / math.sqrt(2)), rel=1e-3)
    assert p == pytest.approx(0.000183, rel=0.01)


def test_mwu_with_ties_hand_computed():
    # combined ranks: 1,2,3.5,3.5,5.5,5.5,7.5,7.5,9,10,11 → R1 = 19.5, U1 = 4.5
    # var = 5*6/12 * (12 - 3*(2**3-2)/(11*10)) = 29.5909; z = (15 - 4.5 - 0.5)/sqrt(var) = 1.8383
    p = stats.mann_whitney_u([1, 2, 3, 4, 5], [3, 4, 5, 6, 7, 8])
    assert p == pytest.approx(math.erfc(1.8383 / math.sqrt(2)), rel=1e-4)
    assert p == pytest.approx(0.06602, abs=1e-4)


def test_mwu_symmetric_and_identical():
    a, b = [1.0, 2.5, 3.1, 4.0], [2.0, 2.7, 5.0]
    assert stats.mann_whitney_u(a, b) == pytest.approx(stats.mann_whitney_u(b, a))
    assert stats.mann_whitney_u([1.0] * 10, [1.0] * 10) == 1.0


def test_mwu_against_scipy_when_installed():
    scipy_stats = pytest.importorskip("scipy.stats")
    rng = random.Random(3)
    a = [round(rng.gauss(1.0, 0.1), 2) for _ in range(15)]
    b = [round(rng.gauss(1.05, 0.1), 2) for _ in range(12)]
    want = scipy_stats.mannwhitneyu(
        a, b, alternative="two-sided", method="asymptotic", use_continuity=True
    )
    assert stats.mann_whitney_u(a, b) == pytest.approx(want.pvalue, rel=1e-9)


def test_ranks_average_ties():
    r, ties = stats.ranks([10, 20, 20, 30])
    assert r == [1, 2.5, 2.5, 4] and ties == [2]


def test_bootstrap_is_reproducible_and_brackets_the_median():
    data = [1.0, 1.1, 0.9, 1.05, 0.95, 1.02, 0.98]
    lo, hi = stats.bootstrap_median_ci(data, seed=7)
    assert (lo, hi) == stats.bootstrap_median_ci(data, seed=7)
    assert lo <= stats.median(data) <= hi
    assert lo >= min(data) and hi <= max(data)


def test_geomean():
    assert stats.geomean([2.0, 0.5]) == pytest.approx(1.0)
    assert stats.geomean([1.1, 1.1, 1.1]) == pytest.approx(1.1)
    assert math.isnan(stats.geomean([]))
