"""Which differences between systems are real: paired permutation tests, Holm's correction, groups.

* ``paired_test``: two systems' scores on the topics both have; under the null hypothesis each
  topic's pair of scores is exchangeable, so the sign of each difference is a coin flip: the
  paired permutation test (what ``scipy.stats.permutation_test`` does with
  ``permutation_type="samples"``, written out here because a dashboard tests hundreds of pairs and
  scipy takes ~16 ms a pair). Exact up to ``EXACT_UP_TO`` differences (every DUC year), else a
  seeded Monte Carlo sample. Two-sided, statistic = mean difference. Exact
  matters with Holm: over 231 pairs the smallest p must be below 0.05 / 231 = 2.2e-4, finer than
  9,999 sampled patterns can resolve (their p is never below 1e-4), so sampling hid 3 of DUC 2006's
  8 significant pairs.
* ``holm``: Holm's step-down adjustment of the pairs' p-values (the family = every pair shown), so
  "A > B at 0.05" keeps its meaning however many systems are compared.
* ``pairwise``: every pair of systems, tested and adjusted.
* ``groups``: systems that cannot be told apart. With the systems in order of mean score, a group
  is a maximal run of consecutive systems no two of which differ significantly (the "compact
  letter display" of ordered means): a system may belong to two overlapping groups.
* ``scu_test``: the SCU-level test the 2007 paper suggests: where two systems' summaries of a
  topic were annotated against the same pyramid, their 0/1 vectors over the pyramid's SCUs are
  paired SCU by SCU, over every such topic (many more observations than topics).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from .scipy_stats import stats

ALPHA = 0.05
PERMUTATIONS = 9999
EXACT_UP_TO = 24  # 2 x 2^12 half sums, ~1-2 ms a pair (each topic more doubles it)


@dataclass(frozen=True)
class PairedTest:
    """Result of a paired test of a against b (``difference`` = mean of a - b over the pairs)."""

    n: int
    difference: float | None
    p_value: float | None
    exact: bool
    resamples: int
    seed: int
    reason: str | None = None

    def as_dict(self) -> dict:
        return {name: getattr(self, name) for name in self.__dataclass_fields__}


def _lattice_p_value(d: np.ndarray, observed: float, tolerance: float) -> float | None:
    """Exact p-value when every |difference| is a whole multiple of the smallest (0/1 SCU vectors,
    or their means over 2-3 annotators); None otherwise.

    The m differences of size s * unit add s * unit * (2K - m) with K ~ Bin(m, 1/2); the
    distribution of the sum is the convolution of those, on the lattice of multiples of ``unit``.
    """
    magnitudes = np.abs(d)
    unit = float(magnitudes.min())
    steps = magnitudes / unit
    whole = np.rint(steps)
    if np.any(np.abs(steps - whole) > 1e-9) or whole.sum() > 200_000:
        return None
    steps = whole.astype(np.int64)
    total = int(steps.sum())
    distribution = np.array([1.0])
    for step in np.unique(steps):
        m = int((steps == step).sum())
        spread = np.zeros(2 * step * m + 1)
        spread[:: 2 * step] = stats().binom.pmf(np.arange(m + 1), m, 0.5)
        distribution = np.convolve(distribution, spread)
    values = np.arange(-total, total + 1)
    threshold = round(observed / unit) - 1e-6
    return float(min(1.0, distribution[np.abs(values) >= threshold].sum()))


@functools.lru_cache(maxsize=4)
def _signs(n: int, resamples: int, seed: int) -> np.ndarray:
    """The Monte Carlo sign patterns: the same for every pair with n differences (same seed)."""
    signs = np.random.default_rng(seed).integers(0, 2, (resamples, n), dtype=np.int8) * 2.0 - 1.0
    signs.flags.writeable = False
    return signs


@functools.lru_cache(maxsize=32)
def _patterns(n: int) -> np.ndarray:
    """Every sign pattern of n differences, one per row (read-only, shared by the pairs)."""
    patterns = ((np.arange(2**n)[:, None] >> np.arange(n)) & 1) * 2.0 - 1.0
    patterns.flags.writeable = False
    return patterns


def _half_sums(d: np.ndarray) -> np.ndarray:
    """The sum of ``d`` under each of its 2^len(d) sign patterns."""
    return _patterns(len(d)) @ d


def _exact_p_value(d: np.ndarray, observed: float, tolerance: float) -> float:
    """Share of the 2^n sign patterns with |sum| >= observed, counted without listing them: the
    patterns of the two halves are summed apart and paired by sorting (meet in the middle), so the
    cost is ~2^(n/2) log rather than 2^n."""
    left, right = _half_sums(d[: len(d) // 2]), np.sort(_half_sums(d[len(d) // 2 :]))
    threshold = observed - tolerance
    at_least = len(right) - np.searchsorted(right, threshold - left, side="left")  # left + right >= threshold
    at_most = np.searchsorted(right, -threshold - left, side="right")  # left + right <= -threshold
    return float(min(1.0, (at_least.sum() + at_most.sum()) / 2.0 ** len(d)))


def sign_flip_p_value(
    differences, *, resamples: int = PERMUTATIONS, seed: int = 0, exact_up_to: int = EXACT_UP_TO
) -> tuple[float, bool]:
    """(two-sided p-value, exact?) of sum(differences) under random sign flips.

    Exact with at most ``exact_up_to`` differences (every pattern counted, the observed one
    included: p = share of patterns at least as extreme), or when the differences are whole
    multiples of one unit (a convolution of binomials); otherwise ``resamples`` patterns drawn with
    ``numpy.random.default_rng(seed)`` as ``rng.integers(0, 2, (resamples, n)) * 2 - 1`` and
    p = (1 + at least as extreme) / (1 + resamples), never 0 (Phipson & Smyth 2010).

    Sampled p-values stop at 1 / (1 + resamples), too coarse for Holm over many pairs (1,770 pairs
    of 60 TAC systems need p < 2.8e-5): below that resolution the p-value is Hoeffding's bound
    2 exp(-S^2 / (2 sum d^2)), an upper bound on the exact p-value (so conservative).
    """
    d = np.asarray(differences, dtype=float)
    n = len(d)
    observed = abs(float(d.sum()))
    tolerance = 1e-9 * max(observed, float(np.abs(d).max(initial=0.0)), 1e-300)
    if n <= exact_up_to:
        return _exact_p_value(d, observed, tolerance), True
    lattice = _lattice_p_value(d, observed, tolerance) if n else None
    if lattice is not None:
        return lattice, True
    extreme = int((np.abs(_signs(n, resamples, seed) @ d) >= observed - tolerance).sum())
    hoeffding = 2 * math.exp(-(observed**2) / (2 * float(np.dot(d, d))))
    return (hoeffding if hoeffding < 1 / (1 + resamples) else (1 + extreme) / (1 + resamples)), False


def paired_test(a: Sequence[float], b: Sequence[float], *, resamples: int = PERMUTATIONS, seed: int = 0) -> PairedTest:
    """Two-sided paired permutation test of mean(a - b) = 0 (sign flips of the differences)."""
    xa, xb = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if xa.shape != xb.shape or xa.ndim != 1:
        raise ValueError("a and b must be two lists of the same length")
    if not (np.all(np.isfinite(xa)) and np.all(np.isfinite(xb))):
        raise ValueError("scores must be finite numbers")
    n = len(xa)
    if n == 0:
        return PairedTest(0, None, None, True, resamples, seed, "no shared topic")
    d = xa - xb
    diff = float(math.fsum(d) / n)
    # Pairs with equal scores do not move the statistic: leaving them out gives the same p-value
    # with fewer patterns (often an exact test instead of a sampled one).
    d = d[d != 0]
    if len(d) == 0:
        return PairedTest(n, diff, 1.0, True, resamples, seed)
    p, exact = sign_flip_p_value(d, resamples=resamples, seed=seed)
    return PairedTest(n, diff, p, exact, resamples, seed)


def holm(p_values: Sequence[float | None]) -> list[float | None]:
    """Holm-adjusted p-values in the given order (None stays None and is not counted in the family).

    Sorted ascending, p_(i) is multiplied by (m - i + 1), the running maximum is taken so the
    adjusted values keep their order, and values are capped at 1.
    """
    present = [(p, i) for i, p in enumerate(p_values) if p is not None]
    m = len(present)
    out: list[float | None] = [None] * len(p_values)
    running = 0.0
    for rank, (p, i) in enumerate(sorted(present)):
        running = max(running, min(1.0, (m - rank) * p))
        out[i] = running
    return out


@dataclass(frozen=True)
class Comparison:
    """One pair of systems: the paired test, its Holm-adjusted p-value and the verdict at ``alpha``."""

    a: Hashable
    b: Hashable
    test: PairedTest
    p_holm: float | None
    alpha: float

    @property
    def significant(self) -> bool:
        return self.p_holm is not None and self.p_holm < self.alpha

    @property
    def better(self) -> Hashable | None:
        """The system with the higher mean when the difference is significant, else None."""
        if not self.significant or not self.test.difference:
            return None
        return self.a if self.test.difference > 0 else self.b

    def as_dict(self) -> dict:
        return {
            "a": self.a,
            "b": self.b,
            **self.test.as_dict(),
            "p_holm": self.p_holm,
            "alpha": self.alpha,
            "significant": self.significant,
            "better": self.better,
        }


def pairwise(
    by_system: Mapping[Hashable, Mapping[Hashable, float]],
    *,
    alpha: float = ALPHA,
    resamples: int = PERMUTATIONS,
    seed: int = 0,
) -> list[Comparison]:
    """Every pair of systems (in the order given), tested over the topics both have, Holm-adjusted.

    ``by_system[system][topic]`` is the system's score on the topic. Each pair is tested with the
    same seed, so one pair's result does not depend on which other systems are shown.
    """
    if not 0 < alpha < 1:
        raise ValueError("alpha must be in (0, 1)")
    systems = list(by_system)
    tests = []
    for i, a in enumerate(systems):
        for b in systems[i + 1 :]:
            shared = sorted(by_system[a].keys() & by_system[b].keys(), key=lambda k: (str(type(k)), str(k)))
            tests.append(
                (
                    a,
                    b,
                    paired_test(
                        [by_system[a][t] for t in shared],
                        [by_system[b][t] for t in shared],
                        resamples=resamples,
                        seed=seed,
                    ),
                )
            )
    adjusted = holm([t.p_value for _, _, t in tests])
    return [Comparison(a, b, t, p, alpha) for (a, b, t), p in zip(tests, adjusted, strict=True)]


def groups(ordered: Sequence[Hashable], comparisons: Sequence[Comparison]) -> list[list[Hashable]]:
    """Maximal runs of consecutive systems (``ordered`` best first) with no significant pair inside.

    A pair that was not tested (no shared topic) counts as "cannot be told apart".
    """
    significant = {frozenset((c.a, c.b)) for c in comparisons if c.significant}
    out: list[list[Hashable]] = []
    reach = -1
    for i in range(len(ordered)):
        j = i
        while j + 1 < len(ordered) and all(
            frozenset((ordered[k], ordered[j + 1])) not in significant for k in range(i, j + 1)
        ):
            j += 1
        if j > reach:  # not contained in the previous run
            out.append(list(ordered[i : j + 1]))
            reach = j
    return out


# --- SCU level -------------------------------------------------------------------------------


@dataclass(frozen=True)
class SCUTest:
    """Paired test over SCUs: ``only_a``/``only_b`` count SCUs one system expressed and not the other."""

    a: Hashable
    b: Hashable
    topics: int
    scus: int
    only_a: float
    only_b: float
    test: PairedTest

    def as_dict(self) -> dict:
        return {
            "a": self.a,
            "b": self.b,
            "topics": self.topics,
            "scus": self.scus,
            "only_a": self.only_a,
            "only_b": self.only_b,
            **{k: v for k, v in self.test.as_dict().items() if k != "n"},
        }


def scu_test(
    a: Hashable,
    b: Hashable,
    vectors: Mapping[Hashable, Mapping[Hashable, Sequence[float]]],
    *,
    resamples: int = PERMUTATIONS,
    seed: int = 0,
) -> SCUTest:
    """Paired permutation test over the SCUs of the topics where both systems have a vector.

    ``vectors[system][topic]`` is the system's vector over the topic's pyramid SCUs (1 = expressed;
    the mean of several annotators' 0/1 vectors where a summary was annotated more than once). Two
    systems' vectors of one topic must come from the same pyramid (same length, same SCU order).
    """
    shared = sorted(vectors[a].keys() & vectors[b].keys(), key=lambda k: (str(type(k)), str(k)))
    xa: list[float] = []
    xb: list[float] = []
    for topic in shared:
        va, vb = list(vectors[a][topic]), list(vectors[b][topic])
        if len(va) != len(vb):
            raise ValueError(f"topic {topic}: the two vectors cover different pyramids ({len(va)} vs {len(vb)} SCUs)")
        xa += va
        xb += vb
    diffs = np.asarray(xa) - np.asarray(xb)
    n = len(xa)
    if n:
        test = paired_test(xa, xb, resamples=resamples, seed=seed)
    else:
        test = PairedTest(
            0, None, None, True, resamples, seed, "no topic where both were annotated against the same pyramid"
        )
    return SCUTest(
        a, b, len(shared), n, float(np.clip(diffs, 0, None).sum()), float(np.clip(-diffs, 0, None).sum()), test
    )
