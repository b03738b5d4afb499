"""Row-wise correlations with missing values against scipy's (scipy as the oracle: the code under
test does not call it)."""

import numpy as np
import pytest
from scipy import stats

from scoring.batch_correlation import kendall_rows, pearson_rows, spearman_rows

ORACLES = {pearson_rows: stats.pearsonr, spearman_rows: stats.spearmanr, kendall_rows: stats.kendalltau}


@pytest.mark.parametrize("func", list(ORACLES))
def test_rows_match_scipy_with_ties_and_missing_values(func):
    rng = np.random.default_rng(7)
    x = rng.integers(0, 6, (60, 12)).astype(float)  # small integers: many ties
    y = x + rng.integers(-3, 4, (60, 12))
    x[rng.random(x.shape) < 0.2] = np.nan
    y[rng.random(y.shape) < 0.1] = np.nan
    got = func(x, y)
    for row in range(len(x)):
        ok = np.isfinite(x[row]) & np.isfinite(y[row])
        xs, ys = x[row][ok], y[row][ok]
        if ok.sum() < 3 or len(set(xs)) == 1 or len(set(ys)) == 1:
            assert np.isnan(got[row])
        else:
            assert got[row] == pytest.approx(ORACLES[func](xs, ys).statistic, abs=1e-12)


@pytest.mark.parametrize("func", list(ORACLES))
def test_undefined_rows_are_nan(func):
    x = np.array([[1.0, 2, 3, 4], [1, 1, 1, 1], [1, 2, np.nan, np.nan]])
    y = np.array([[2.0, 1, 4, 3], [1, 2, 3, 4], [3, 4, 5, 6]])
    got = func(x, y)
    assert np.isfinite(got[0]) and np.isnan(got[1]) and np.isnan(got[2])
