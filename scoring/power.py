"""How many topics would tell two systems apart? A planning table from the variance observed.

For two systems compared on the same topics, what matters is the spread of their per-topic
differences (sd_d). For a difference delta of the mean scores, the topics needed are the smallest
n whose two-sided paired t-test at level ``alpha`` has the wanted ``power``:
power(n) = P(|T| > t_{1-alpha/2, n-1}) with T noncentral t (df n - 1, noncentrality
delta / sd_d * sqrt(n)). The permutation test the dashboards run has nearly the same power as the
t-test on such data, and the t-test has a closed form to plan with.

sd_d is taken from the data: the sample sd of the differences of every pair of systems over
their shared topics (at least 2); the table uses the median pair (a typical pair) and the
quartiles (pairs that are easier or harder to separate).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from .scipy_stats import stats

ALPHA = 0.05
POWER = 0.8
DIFFERENCES = (0.01, 0.02, 0.03, 0.04, 0.05, 0.06, 0.08, 0.1)
MAX_TOPICS = 5000


def t_test_power(n, effect, alpha: float = ALPHA) -> np.ndarray:
    """Power of the two-sided paired t-test with n pairs at standardized effect delta / sd_d."""
    n = np.asarray(n, dtype=float)
    df = n - 1
    scipy_stats = stats()
    crit = scipy_stats.t.ppf(1 - alpha / 2, df)
    nc = effect * np.sqrt(n)
    exact = scipy_stats.nct.sf(crit, df, nc) + scipy_stats.nct.cdf(-crit, df, nc)
    # scipy's noncentral t gives NaN for large noncentralities, where it is all but normal.
    normal = scipy_stats.norm.sf(crit - nc) + scipy_stats.norm.cdf(-crit - nc)
    return np.where(np.isfinite(exact), exact, normal)


def _needed(effects: np.ndarray, alpha: float, power: float, max_topics: int) -> list[int | None]:
    """Smallest n in [2, max_topics] with the power, per effect (bisection on all effects at once:
    the power grows with n); None where even ``max_topics`` falls short."""
    effects = np.asarray(effects, dtype=float)
    reachable = t_test_power(np.full(effects.shape, max_topics), effects, alpha) >= power
    low = np.ones(effects.shape, dtype=np.int64)  # power(low) < target (n = 1 has no test)
    high = np.full(effects.shape, max_topics, dtype=np.int64)
    while np.any(high - low > 1):
        mid = (low + high) // 2
        enough = t_test_power(np.maximum(mid, 2), effects, alpha) >= power
        high = np.where(enough, mid, high)
        low = np.where(enough, low, mid)
    return [int(max(h, 2)) if ok else None for h, ok in zip(high, reachable, strict=True)]


def _check(alpha: float, power: float) -> None:
    if not 0 < alpha < 1 or not 0 < power < 1:
        raise ValueError("alpha and power must be in (0, 1)")


def topics_needed(
    difference: float, sd: float, *, alpha: float = ALPHA, power: float = POWER, max_topics: int = MAX_TOPICS
) -> int | None:
    """Smallest number of topics (>= 2) with the wanted power; None beyond ``max_topics``."""
    if difference <= 0 or sd < 0:
        raise ValueError("difference must be > 0 and sd >= 0")
    _check(alpha, power)
    if sd == 0:
        return 2
    return _needed(np.array([difference / sd]), alpha, power, max_topics)[0]


def difference_sds(by_system: Mapping[Hashable, Mapping[Hashable, float]]) -> list[float]:
    """Sample sd of the per-topic differences of every pair of systems with 2+ shared topics, the
    topics in a fixed order (a set's order changes with the process's string hashing, and with it
    the sd's last bits: the figure would depend on which process computed it)."""
    systems = list(by_system)
    out = []
    for i, a in enumerate(systems):
        for b in systems[i + 1 :]:
            shared = sorted(by_system[a].keys() & by_system[b].keys(), key=lambda k: (str(type(k)), str(k)))
            if len(shared) >= 2:
                out.append(float(np.std([by_system[a][t] - by_system[b][t] for t in shared], ddof=1)))
    return out


@dataclass(frozen=True)
class PowerRow:
    difference: float
    typical: int | None  # topics needed at the median pair's sd
    easy: int | None  # at the first quartile of the sd (pairs easier to separate)
    hard: int | None  # at the third quartile

    def as_dict(self) -> dict:
        return {name: getattr(self, name) for name in self.__dataclass_fields__}


@dataclass(frozen=True)
class PowerTable:
    alpha: float
    power: float
    pairs: int  # system pairs behind the sd
    sd_quartiles: tuple[float, float, float] | None
    topics: int  # topics observed
    rows: tuple[PowerRow, ...]
    reason: str | None = None

    def as_dict(self) -> dict:
        return {
            "alpha": self.alpha,
            "power": self.power,
            "pairs": self.pairs,
            "sd_quartiles": list(self.sd_quartiles) if self.sd_quartiles else None,
            "topics": self.topics,
            "rows": [r.as_dict() for r in self.rows],
            "reason": self.reason,
        }


def power_table(
    by_system: Mapping[Hashable, Mapping[Hashable, float]],
    *,
    differences: Sequence[float] = DIFFERENCES,
    alpha: float = ALPHA,
    power: float = POWER,
) -> PowerTable:
    """Topics needed to detect each difference, at the observed spread of paired differences."""
    topics = len({t for scores in by_system.values() for t in scores})
    sds = difference_sds(by_system)
    if not sds:
        return PowerTable(alpha, power, 0, None, topics, (), "no two systems share two topics")
    _check(alpha, power)
    quartiles = np.quantile(sds, [0.25, 0.5, 0.75])
    q1, q2, q3 = (float(q) for q in quartiles)
    diffs = np.asarray(differences, dtype=float)
    if np.any(diffs <= 0):
        raise ValueError("differences must be > 0")
    # Topics needed per (difference, quartile); a zero spread separates any difference with 2 topics.
    effects = diffs[:, None] / np.where(quartiles > 0, quartiles, np.nan)[None, :]
    needed = np.array(_needed(np.nan_to_num(effects, nan=1e9).ravel(), alpha, power, MAX_TOPICS), dtype=object).reshape(
        effects.shape
    )
    rows = tuple(PowerRow(float(d), needed[i, 1], needed[i, 0], needed[i, 2]) for i, d in enumerate(diffs))
    return PowerTable(alpha, power, len(sds), (q1, q2, q3), topics, rows)
