"""Pearson, Spearman and Kendall tau-b on many rows at once, missing values allowed.

Why not ``scoring.correlation``: the resampling statistics (bootstrap intervals of meta-evaluation
correlations, stability curves) compute the same correlation on thousands of resampled vectors; a
scipy call per vector would take seconds. Here each function takes two arrays of shape
``(rows, items)`` and returns one coefficient per row, computed over the items where both values
are finite (NaN marks a missing value). A row is NaN where the correlation is undefined by the
same rule as ``scoring.correlation``: fewer than 3 items, or one side constant.

Definitions: Pearson's r; Spearman's rho = Pearson's r of the average ranks (ties share the mean
rank); Kendall's tau-b = (C - D) / sqrt((n0 - Tx)(n0 - Ty)), n0 the number of item pairs, Tx and
Ty the pairs tied in x and in y (``scipy.stats.kendalltau``'s default, used by SacreROUGE).
Kendall's tau compares every pair of items: item by item, so memory stays rows x items.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .scipy_stats import stats


def _as_pair(x, y) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    xs, ys = np.atleast_2d(np.asarray(x, dtype=float)), np.atleast_2d(np.asarray(y, dtype=float))
    if xs.shape != ys.shape:
        raise ValueError(f"x and y differ in shape ({xs.shape} vs {ys.shape})")
    valid = np.isfinite(xs) & np.isfinite(ys)
    return xs, ys, valid


def _constant(values: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """Rows whose valid values are all equal (as ``scoring.correlation``: one distinct value)."""
    return np.where(valid, values, -np.inf).max(axis=1) == np.where(valid, values, np.inf).min(axis=1)


def _pearson_masked(xs: np.ndarray, ys: np.ndarray, valid: np.ndarray) -> np.ndarray:
    n = valid.sum(axis=1)
    safe_n = np.maximum(n, 1)
    mx = np.where(valid, xs, 0.0).sum(axis=1) / safe_n
    my = np.where(valid, ys, 0.0).sum(axis=1) / safe_n
    dx = np.where(valid, xs - mx[:, None], 0.0)
    dy = np.where(valid, ys - my[:, None], 0.0)
    sxx, syy, sxy = (dx * dx).sum(axis=1), (dy * dy).sum(axis=1), (dx * dy).sum(axis=1)
    constant = _constant(xs, valid) | _constant(ys, valid)
    with np.errstate(invalid="ignore", divide="ignore"):
        r = sxy / np.sqrt(sxx * syy)
    r = np.clip(r, -1.0, 1.0)
    return np.where((n >= 3) & ~constant, r, np.nan)


def pearson_rows(x, y) -> np.ndarray:
    """Pearson's r of each row of ``x`` with the same row of ``y``."""
    return _pearson_masked(*_as_pair(x, y))


def spearman_rows(x, y) -> np.ndarray:
    """Spearman's rho per row: Pearson's r of the average ranks among the row's valid items."""
    xs, ys, valid = _as_pair(x, y)
    # Rank only the items valid on both sides (``rankdata`` leaves NaN out and in place).
    rankdata = stats().rankdata
    rx = rankdata(np.where(valid, xs, np.nan), axis=1, nan_policy="omit")
    ry = rankdata(np.where(valid, ys, np.nan), axis=1, nan_policy="omit")
    return _pearson_masked(rx, ry, valid)


def kendall_rows(x, y) -> np.ndarray:
    """Kendall's tau-b per row over the row's valid items (pairs with item i, one i at a time)."""
    xs, ys, valid = _as_pair(x, y)
    xs, ys = np.where(valid, xs, np.nan), np.where(valid, ys, np.nan)
    rows, items = xs.shape
    s, n0, tied_x, tied_y = (np.zeros(rows, dtype=np.int64) for _ in range(4))
    for i in range(items - 1):
        dx = xs[:, i, None] - xs[:, i + 1 :]
        dy = ys[:, i, None] - ys[:, i + 1 :]
        # Sign of the product: > 0 concordant, < 0 discordant, 0 tied, NaN a pair with a missing value.
        # (Score differences are far above the ~1e-160 where the product could underflow to 0.)
        product = dx * dy
        both = ~np.isnan(product)
        s += (product > 0).sum(axis=1) - (product < 0).sum(axis=1)
        n0 += both.sum(axis=1)
        tied_x += ((dx == 0) & both).sum(axis=1)
        tied_y += ((dy == 0) & both).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        tau = s / np.sqrt((n0 - tied_x).astype(float) * (n0 - tied_y))
    n = valid.sum(axis=1)
    return np.where((n >= 3) & (n0 > tied_x) & (n0 > tied_y), np.clip(tau, -1.0, 1.0), np.nan)


METHODS: dict[str, Callable[..., np.ndarray]] = {
    "pearson": pearson_rows,
    "spearman": spearman_rows,
    "kendall": kendall_rows,
}


# --- the same correlations with items repeated (bootstrap resamples as multiplicities) ---------


def _weighted_pearson(x: np.ndarray, z: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Pearson's r over items repeated w times: x, z (groups, items); w (rows, groups, items) >= 0."""
    n = w.sum(-1)
    safe = np.maximum(n, 1)
    mx = (w * x).sum(-1) / safe
    mz = (w * z).sum(-1) / safe
    dx, dz = x - mx[..., None], z - mz[..., None]
    sxx, szz, sxz = (w * dx * dx).sum(-1), (w * dz * dz).sum(-1), (w * dx * dz).sum(-1)
    present = w > 0
    constant = (np.where(present, x, -np.inf).max(-1) == np.where(present, x, np.inf).min(-1)) | (
        np.where(present, z, -np.inf).max(-1) == np.where(present, z, np.inf).min(-1)
    )
    with np.errstate(invalid="ignore", divide="ignore"):
        r = np.clip(sxz / np.sqrt(sxx * szz), -1.0, 1.0)
    return np.where((n >= 3) & ~constant, r, np.nan)


def _spread(w: np.ndarray, relation: np.ndarray) -> np.ndarray:
    """sum_j w[..., g, j] * relation[g, i, j] for every row: (rows, groups, items)."""
    # numpy's own loop, not BLAS: these products are small, and a multithreaded BLAS on a busy
    # machine spends ten times longer synchronising its threads than multiplying.
    return np.einsum("bgj,gij->bgi", w, relation)


def _weighted_ranks(x: np.ndarray, valid: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Average rank of each item among the repeated valid items: (items below) + (items equal + 1) / 2."""
    both = valid[:, :, None] & valid[:, None, :]
    below = (both & (x[:, None, :] < x[:, :, None])).astype(float)  # [g, i, j]: x_j < x_i
    equal = (both & (x[:, None, :] == x[:, :, None])).astype(float)
    return _spread(w, below) + (_spread(w, equal) + 1) / 2


def _weighted_kendall(x: np.ndarray, z: np.ndarray, valid: np.ndarray, w: np.ndarray) -> np.ndarray:
    both = valid[:, :, None] & valid[:, None, :]
    concordance = np.where(both, np.sign(x[:, :, None] - x[:, None, :]) * np.sign(z[:, :, None] - z[:, None, :]), 0.0)
    tie_x = (both & (x[:, :, None] == x[:, None, :])).astype(float)  # diagonal included: copies of one item tie
    tie_z = (both & (z[:, :, None] == z[:, None, :])).astype(float)
    n = w.sum(-1)
    n0 = (n * n - n) / 2
    s = (_spread(w, concordance) * w).sum(-1) / 2
    tied_x = ((_spread(w, tie_x) * w).sum(-1) - n) / 2
    tied_z = ((_spread(w, tie_z) * w).sum(-1) - n) / 2
    with np.errstate(invalid="ignore", divide="ignore"):
        tau = np.clip(s / np.sqrt((n0 - tied_x) * (n0 - tied_z)), -1.0, 1.0)
    return np.where((n >= 3) & (n0 > tied_x) & (n0 > tied_z), tau, np.nan)


def repeated(x, z, weights, method: str) -> np.ndarray:
    """The correlation of each group of items, once per row of multiplicities.

    ``x``, ``z``: (groups, items), NaN = missing; ``weights``: (rows, groups or 1, items), how many
    times each item is drawn in that row. Equal to computing ``METHODS[method]`` on the vector with
    every item written out that many times (pairs of copies tie), without writing them out: what a
    bootstrap over systems needs (a system drawn twice counts twice).
    """
    xs, zs = np.asarray(x, dtype=float), np.asarray(z, dtype=float)
    valid = np.isfinite(xs) & np.isfinite(zs)
    w = np.asarray(weights, dtype=float) * valid[None]
    xs, zs = np.where(valid, xs, 0.0), np.where(valid, zs, 0.0)
    if method == "pearson":
        return _weighted_pearson(xs, zs, w)
    if method == "spearman":
        return _weighted_pearson(_weighted_ranks(xs, valid, w), _weighted_ranks(zs, valid, w), w)
    if method == "kendall":
        return _weighted_kendall(xs, zs, valid, w)
    raise ValueError(f"method must be one of {sorted(METHODS)}, not {method!r}")
