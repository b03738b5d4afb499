"""Correlations between two score lists, with the number of items and reasons when undefined.

Used for "do two annotations give the same scores?" (Tables IV and V of Nenkova, Passonneau &
McKeown 2007: Pearson r with a 95% Fisher-z confidence interval, and the mean absolute difference)
and for correlating pyramid scores with other metrics (Pearson, Spearman, Kendall).

Kendall comes from scipy, Pearson and Spearman are computed here (see ``_pearson_r``); this module
adds what scipy leaves to the caller: equal-length checks, ``None`` plus a reason instead of NaN and
a warning (fewer than 3 pairs, a constant side), and the sample size carried along with each figure.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist

from .scipy_stats import stats

NOISE = 0.06  # two independent annotations' scores differ by about this much (2007 paper, 4.2)
_NOISE_DIGITS = 9  # differences are compared to NOISE rounded to 1e-9


def above_noise(difference: float | None, noise: float = NOISE) -> bool:
    """Whether a score difference (its sign ignored), or a mean absolute difference, exceeds the
    method's own noise: the one rule every page, download and stored figure flags with. Compared
    rounded to 1e-9, because float subtraction is not exact: |0.56 - 0.50| is 0.06000000000000005
    and |0.36 - 0.30| is 0.06 (both 3/50), so a plain ``>`` would flag one and not the other."""
    return difference is not None and round(abs(difference), _NOISE_DIGITS) > noise


@dataclass(frozen=True)
class Correlation:
    method: str  # "pearson", "spearman" or "kendall"
    value: float | None
    n: int
    p_value: float | None = None
    confidence: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    reason: str | None = None  # why value is None
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
    n = len(xs)
    r = _pearson_r(xs, ys)
    p = _pearson_p(r, n)
    if n <= 3:
        return Correlation("pearson", r, n, p, confidence, ci_reason="a Fisher-z interval needs more than 3 pairs")
    # As scipy's ``pearsonr(...).confidence_interval``: tanh(atanh(r) -/+ z / sqrt(n - 3)).
    z = NormalDist().inv_cdf(0.5 + confidence / 2) / math.sqrt(n - 3)
    zr = math.atanh(r) if abs(r) < 1 else math.copysign(math.inf, r)
    return Correlation("pearson", r, n, p, confidence, math.tanh(zr - z), math.tanh(zr + z))


# Pearson is computed here rather than by scipy: the stored agreement of every topic needs it after
# each import or edit, and importing scipy.stats costs a process most of a second of CPU. The values
# agree with ``scipy.stats.pearsonr`` to about 1e-12 (tests/scoring/test_correlation_statistics.py).


def _pearson_r(xs: list[float], ys: list[float]) -> float:
    mx, my = math.fsum(xs) / len(xs), math.fsum(ys) / len(ys)
    dx, dy = [v - mx for v in xs], [v - my for v in ys]
    r = math.fsum(a * b for a, b in zip(dx, dy, strict=True)) / math.sqrt(
        math.fsum(a * a for a in dx) * math.fsum(b * b for b in dy)
    )
    return max(-1.0, min(1.0, r))


def _pearson_p(r: float, n: int) -> float:
    """Two-sided p-value of r under independence: P(|T| >= |t|) for Student's t with n - 2 degrees
    of freedom, which is the regularized incomplete beta I_{1 - r^2}((n - 2) / 2, 1 / 2)."""
    return _betainc((n - 2) / 2, 0.5, 1 - r * r) if abs(r) < 1 else 0.0


def _betainc(a: float, b: float, x: float) -> float:
    """Regularized incomplete beta function I_x(a, b) (continued fraction, modified Lentz)."""
    if x <= 0:
        return 0.0
    if x >= 1:
        return 1.0
    if x > (a + 1) / (a + b + 2):
        return 1.0 - _betainc(b, a, 1 - x)
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)) / a
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    f = d
    for m in range(1, 10_000):
        for numerator in (
            m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1)),
        ):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + numerator / c
            c = c if abs(c) > tiny else tiny
            f *= c * d
        if abs(c * d - 1.0) < 1e-16:
            break
    return front * f


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
    """Spearman's rho as ``scipy.stats.spearmanr`` gives it (Pearson's r of the average ranks, its
    p-value from Student's t with n - 2 degrees of freedom); no confidence interval.

    Computed here, like Pearson, because every topic's construction agreement needs it after an
    import or an edit (``scoring.pyramid_agreement``), and the import of scipy.stats alone cost a
    process that stores it most of a second of CPU (a third of DUC 2006's import)."""
    xs, ys = _validate(x, y)
    reason = _undefined(xs, ys)
    if reason:
        return Correlation("spearman", None, len(xs), reason=reason)
    r = _pearson_r(_average_ranks(xs), _average_ranks(ys))
    return Correlation("spearman", r, len(xs), _pearson_p(r, len(xs)), ci_reason="no interval computed")


def _average_ranks(values: list[float]) -> list[float]:
    """1-based ranks, tied values sharing the mean of their ranks (``scipy.stats.rankdata``'s default)."""
    order = sorted(range(len(values)), key=values.__getitem__)
    ranks = [0.0] * len(values)
    start = 0
    while start < len(order):
        end = start
        while end + 1 < len(order) and values[order[end + 1]] == values[order[start]]:
            end += 1
        for i in order[start : end + 1]:
            ranks[i] = (start + end) / 2 + 1
        start = end + 1
    return ranks


def kendall(x: Sequence[float], y: Sequence[float]) -> Correlation:
    """Kendall's tau-b (``scipy.stats.kendalltau``, which handles ties); no interval."""
    return _rank("kendall", stats().kendalltau, x, y)


def mean_abs_difference(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Mean of |x_i - y_i|; None for empty lists. Differences above 0.06 exceed the method's own
    annotation noise (2007 paper, section 4.2)."""
    xs, ys = _validate(x, y)
    if not xs:
        return None
    return math.fsum(abs(a - b) for a, b in zip(xs, ys, strict=True)) / len(xs)
