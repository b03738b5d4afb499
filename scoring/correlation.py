"""Correlations between two score lists, with the number of items and reasons when undefined.

Used for "do two annotations give the same scores?" (Tables IV and V of Nenkova, Passonneau &
McKeown 2007: Pearson r with a 95% Fisher-z confidence interval, and the mean absolute difference)
and for correlating pyramid scores with other metrics (Pearson, Spearman, Kendall).

The values come from scipy; this module adds what scipy leaves to the caller: equal-length checks,
``None`` plus a reason instead of NaN and a warning (fewer than 3 pairs, a constant side), and the
sample size carried along with each figure.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass



def _stats():
    """scipy.stats, imported on first use: it takes seconds to import, and every process that
    loads the models (commands, workers) imports this module without needing it."""
    from scipy import stats

    return stats


@dataclass(frozen=True)
class Correlation:
    method: str                  # "pearson", "spearman" or "kendall"
    value: float | None
    n: int
    p_value: float | None = None
    confidence: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    reason: str | None = None     # why value is None
    ci_reason: str | None = None  # why the interval is None while value is not

    def as_dict(self) -> dict:
        return {name: getattr(self, name) for name in self.__dataclass_fields__}


def _validate(x: Sequence[float], y: Sequence[float]) -> tuple[list[float], list[float]]:
    xs, ys = [float(v) for v in x], [float(v) for v in y]
    if len(xs) != len(ys):
        raise ValueError(f"x and y differ in length ({len(xs)} vs {len(ys)})")
    if not all(math.isfinite(v) for v in xs + ys):
        raise ValueError("x and y must be finite numbers")
    return xs, ys


def _undefined(xs: list[float], ys: list[float]) -> str | None:
    if len(xs) < 3:
        return f"fewer than 3 pairs (n = {len(xs)})"
    if len(set(xs)) == 1:
        return "x is constant"
    if len(set(ys)) == 1:
        return "y is constant"
    return None


def pearson(x: Sequence[float], y: Sequence[float], confidence: float = 0.95) -> Correlation:
    """Pearson r with a Fisher-z interval: tanh(atanh(r) -/+ z_{(1+c)/2} / sqrt(n - 3)).

    The interval needs n > 3 (at n = 3 its half-width is infinite): then only r is given.
    """
    if not 0 < confidence < 1:
        raise ValueError("confidence must be in (0, 1)")
    xs, ys = _validate(x, y)
    reason = _undefined(xs, ys)
    if reason:
        return Correlation("pearson", None, len(xs), confidence=confidence, reason=reason)
    res = _stats().pearsonr(xs, ys)
    r = float(res.statistic)
    if len(xs) <= 3:
        return Correlation(
            "pearson", r, len(xs), float(res.pvalue), confidence,
            ci_reason="a Fisher-z interval needs more than 3 pairs",
        )
    ci = res.confidence_interval(confidence_level=confidence)
    return Correlation(
        "pearson", r, len(xs), float(res.pvalue), confidence, float(ci.low), float(ci.high)
    )


def _rank(method: str, func, x, y) -> Correlation:
    xs, ys = _validate(x, y)
    reason = _undefined(xs, ys)
    if reason:
        return Correlation(method, None, len(xs), reason=reason)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = func(xs, ys)
    value = float(res.statistic)
    if math.isnan(value):
        return Correlation(method, None, len(xs), reason="scipy returned NaN")
    return Correlation(method, value, len(xs), float(res.pvalue), ci_reason="no interval computed")


def spearman(x: Sequence[float], y: Sequence[float]) -> Correlation:
    """Spearman's rho (``scipy.stats.spearmanr``); no confidence interval."""
    return _rank("spearman", _stats().spearmanr, x, y)


def kendall(x: Sequence[float], y: Sequence[float]) -> Correlation:
    """Kendall's tau-b (``scipy.stats.kendalltau``, which handles ties); no interval."""
    return _rank("kendall", _stats().kendalltau, x, y)


def mean_abs_difference(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Mean of |x_i - y_i|; None for empty lists. Differences above 0.06 exceed the method's own
    annotation noise (2007 paper, section 4.2)."""
    xs, ys = _validate(x, y)
    if not xs:
        return None
    return math.fsum(abs(a - b) for a, b in zip(xs, ys)) / len(xs)
