"""Correlations: Fisher-z interval by hand, equality with scipy, undefined cases."""

import math
import random

import pytest
from scipy import stats

from scoring import kendall, mean_abs_difference, pearson, spearman


def fisher_ci(r, n, z_crit):
    z = math.atanh(r)
    half = z_crit / math.sqrt(n - 3)
    return math.tanh(z - half), math.tanh(z + half)


@pytest.mark.parametrize("seed", range(20))
def test_pearson_ci_is_fisher_z(seed):
    rng = random.Random(seed)
    n = rng.randint(4, 40)
    x = [rng.random() for _ in range(n)]
    y = [xi + rng.gauss(0, 0.5) for xi in x]
    c = pearson(x, y)
    assert c.n == n and c.confidence == 0.95
    assert c.value == pytest.approx(stats.pearsonr(x, y).statistic, abs=1e-12)
    lo, hi = fisher_ci(c.value, n, stats.norm.ppf(0.975))
    assert (c.ci_low, c.ci_high) == (pytest.approx(lo, abs=1e-12), pytest.approx(hi, abs=1e-12))
    lo196, hi196 = fisher_ci(c.value, n, 1.96)  # the textbook constant
    assert c.ci_low == pytest.approx(lo196, abs=1e-4) and c.ci_high == pytest.approx(hi196, abs=1e-4)
    c90 = pearson(x, y, confidence=0.90)
    lo90, hi90 = fisher_ci(c.value, n, stats.norm.ppf(0.95))
    assert c90.ci_low == pytest.approx(lo90, abs=1e-12) and c90.ci_high == pytest.approx(hi90, abs=1e-12)
    assert c.ci_low <= c90.ci_low <= c.value <= c90.ci_high <= c.ci_high


def test_pearson_hand_value():
    # deviations dx = -1.5,-.5,.5,1.5 and dy = -.5,-1.5,1.5,.5: r = 3 / sqrt(5 * 5) = 0.6
    c = pearson([1, 2, 3, 4], [2, 1, 4, 3])
    assert c.value == pytest.approx(0.6)
    lo, hi = fisher_ci(0.6, 4, stats.norm.ppf(0.975))  # se = 1/sqrt(1)
    assert c.ci_low == pytest.approx(lo) and c.ci_high == pytest.approx(hi)


@pytest.mark.parametrize("seed", range(10))
def test_rank_correlations_equal_scipy(seed):
    rng = random.Random(seed)
    x = y = [0]
    while len(set(x)) == 1 or len(set(y)) == 1:  # a constant draw has no rank correlation: draw again
        n = rng.randint(3, 30)
        x = [rng.randint(0, 5) for _ in range(n)]  # ties on purpose
        y = [rng.randint(0, 5) for _ in range(n)]
    assert spearman(x, y).value == pytest.approx(stats.spearmanr(x, y).statistic, abs=1e-12)
    assert kendall(x, y).value == pytest.approx(stats.kendalltau(x, y).statistic, abs=1e-12)
    assert spearman(x, y).n == kendall(x, y).n == n


@pytest.mark.parametrize("func", [pearson, spearman, kendall])
def test_undefined_cases(func):
    c = func([0.1, 0.2], [0.3, 0.1])
    assert c.value is None and "fewer than 3" in c.reason and c.n == 2
    c = func([0.5, 0.5, 0.5, 0.5], [0.1, 0.2, 0.3, 0.4])
    assert c.value is None and c.reason == "x is constant"
    c = func([0.1, 0.2, 0.3, 0.4], [1, 1, 1, 1])
    assert c.value is None and c.reason == "y is constant"
    with pytest.raises(ValueError):
        func([1, 2, 3], [1, 2])
    with pytest.raises(ValueError):
        func([1, 2, float("nan")], [1, 2, 3])


def test_pearson_with_three_pairs_has_no_interval():
    c = pearson([1, 2, 3], [1, 3, 2])
    assert c.value == pytest.approx(0.5)
    assert c.ci_low is None and c.ci_high is None and c.ci_reason


def test_mean_abs_difference():
    assert mean_abs_difference([0.5, 0.7], [0.4, 0.9]) == pytest.approx(0.15)  # (0.1 + 0.2) / 2
    assert mean_abs_difference([], []) is None
    with pytest.raises(ValueError):
        mean_abs_difference([1], [1, 2])
