"""Pearson and Spearman are computed without scipy (its import costs every scoring process most of
a second): they must give what ``scipy.stats.pearsonr`` gives, r, p-value and Fisher-z interval,
and what ``scipy.stats.spearmanr`` gives, rho and p-value, ties included."""

import random

import pytest
from scipy import stats

from scoring.correlation import pearson, spearman


@pytest.mark.parametrize("n", [3, 4, 5, 10, 22, 60, 500])
@pytest.mark.parametrize("seed", range(4))
def test_pearson_agrees_with_scipy(n, seed):
    rng = random.Random(seed * 1000 + n)
    slope = rng.choice([-2.0, -0.3, 0.0, 0.1, 1.0])
    x = [rng.random() for _ in range(n)]
    y = [slope * a + rng.gauss(0, 0.3) for a in x]
    ours, theirs = pearson(x, y, confidence=0.9 if seed == 3 else 0.95), stats.pearsonr(x, y)
    assert ours.value == pytest.approx(theirs.statistic, abs=1e-12)
    assert ours.p_value == pytest.approx(theirs.pvalue, rel=1e-9, abs=1e-300)
    if n > 3:
        ci = theirs.confidence_interval(confidence_level=ours.confidence)
        assert (ours.ci_low, ours.ci_high) == pytest.approx((ci.low, ci.high), abs=1e-12)
    else:
        assert ours.ci_low is None and ours.ci_reason


def test_pearson_of_a_perfect_line_and_of_scores_with_ties():
    perfect = pearson([0.1, 0.2, 0.3, 0.4, 0.5], [1, 2, 3, 4, 5])
    assert perfect.value == pytest.approx(1.0) and perfect.p_value == pytest.approx(
        stats.pearsonr([0.1, 0.2, 0.3, 0.4, 0.5], [1, 2, 3, 4, 5]).pvalue, abs=1e-12
    )
    x, y = [0.5, 0.5, 0.25, 0.75, 0.5, 1.0], [0.4, 0.6, 0.2, 0.8, 0.4, 0.9]
    assert pearson(x, y).p_value == pytest.approx(stats.pearsonr(x, y).pvalue, rel=1e-9)


@pytest.mark.parametrize("n", [3, 4, 5, 10, 22, 60, 500])
@pytest.mark.parametrize("seed", range(4))
def test_spearman_agrees_with_scipy(n, seed):
    """Continuous values, then small integers (SCU weights: many ties), as the construction
    agreement compares them."""
    rng = random.Random(seed * 1000 + n)
    slope = rng.choice([-2.0, -0.3, 0.0, 0.1, 1.0])
    x = [rng.random() for _ in range(n)]
    y = [slope * a + rng.gauss(0, 0.3) for a in x]
    weights_a = [rng.randint(1, 4) for _ in range(n)]
    weights_b = [max(1, w + rng.choice([-1, 0, 0, 1])) for w in weights_a]
    for a, b in ((x, y), (weights_a, weights_b)):
        ours = spearman(a, b)
        if len(set(a)) == 1 or len(set(b)) == 1:
            assert ours.value is None and ours.reason
            continue
        theirs = stats.spearmanr(a, b)
        assert ours.value == pytest.approx(theirs.statistic, abs=1e-12)
        assert ours.p_value == pytest.approx(theirs.pvalue, rel=1e-9, abs=1e-300)


def test_spearman_of_tied_and_perfectly_ranked_values():
    x, y = [1, 2, 2, 3, 5, 5, 5], [2, 1, 3, 3, 4, 6, 6]
    assert spearman(x, y).value == pytest.approx(stats.spearmanr(x, y).statistic, abs=1e-12)
    perfect = spearman([0.1, 0.5, 0.7, 2.0], [3, 4, 10, 11])
    assert perfect.value == 1.0 and perfect.p_value == pytest.approx(
        stats.spearmanr([0.1, 0.5, 0.7, 2.0], [3, 4, 10, 11]).pvalue, abs=1e-12
    )
