"""Pearson is computed without scipy (its import costs every scoring process most of a second):
it must give what ``scipy.stats.pearsonr`` gives, r, p-value and Fisher-z interval."""

import random

import pytest
from scipy import stats

from scoring.correlation import pearson


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
