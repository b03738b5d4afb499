"""Bootstrap confidence intervals: a system's mean score over topics, and meta-evaluation correlations.

A system mean rests on a sample of topics; another sample would give another mean. The interval
says how far: the percentile bootstrap over topics (``scipy.stats.bootstrap``, resampling the
topics with replacement). Percentile rather than BCa: BCa is undefined for a constant sample (all
topics scoring 0) and unstable on the 20-odd topics of a DUC year; the percentile interval is what
Deutsch, Dror & Roth (2021) use for correlations too, so both kinds of interval read alike.

Correlations (Deutsch, Dror & Roth, "A Statistical Analysis of Summarization Evaluation Metrics
using Resampling Methods", TACL 2021). With X and Z the systems x topics matrices of the two
metrics, a replicate resamples the systems (rows, with replacement), the topics (columns) or both,
and recomputes the correlation at its level:

* system level: correlation across the sampled systems of their means over the sampled topics;
* summary level: for each sampled topic, the correlation across the sampled systems that have
  both metrics there, then the mean over the topics where it is defined.

Which axes are resampled follows the level: the system level resamples the systems (the
correlation is over systems; its means are over every topic), the summary level resamples both
systems and topics (BOOT-BOTH, the paper's recommendation, as its summaries are systems x topics).
Replicates whose correlation is undefined (a constant side) are left out and counted.

Reproducibility: every interval is computed with ``numpy.random.default_rng(seed)``; for the
correlations the replicates are drawn as ``rng.integers(0, systems, (n, systems))`` then
``rng.integers(0, topics, (n, topics))`` (systems in the order given, topics sorted), so the same
seed and data give the same interval anywhere.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping
from dataclasses import dataclass

import numpy as np

from .batch_correlation import METHODS, repeated
from .scipy_stats import stats

CONFIDENCE = 0.95
MEAN_RESAMPLES = 9999
CORRELATION_RESAMPLES = 1000
LEVELS = ("system", "summary")


@dataclass(frozen=True)
class Interval:
    """A statistic with its bootstrap interval, the sample size and the seed that reproduces it."""

    value: float | None
    low: float | None
    high: float | None
    n: int
    confidence: float
    resamples: int
    seed: int
    reason: str | None = None  # why low/high are None
    undefined_replicates: int = 0  # replicates left out (statistic undefined on them)

    def as_dict(self) -> dict:
        return {name: getattr(self, name) for name in self.__dataclass_fields__}


def _check(confidence: float, resamples: int) -> None:
    if not 0 < confidence < 1:
        raise ValueError("confidence must be in (0, 1)")
    if resamples < 1:
        raise ValueError("resamples must be at least 1")


def mean_interval(
    values, *, confidence: float = CONFIDENCE, resamples: int = MEAN_RESAMPLES, seed: int = 0
) -> Interval:
    """Mean of ``values`` (one per topic) and its percentile-bootstrap interval over the topics."""
    _check(confidence, resamples)
    vs = np.asarray([float(v) for v in values], dtype=float)
    if not np.all(np.isfinite(vs)):
        raise ValueError("values must be finite numbers")
    n = len(vs)
    if n == 0:
        return Interval(None, None, None, 0, confidence, resamples, seed, "no topic")
    mean = math.fsum(vs) / n
    if n < 2:
        return Interval(mean, None, None, n, confidence, resamples, seed, "a single topic: nothing to resample")
    if np.all(vs == vs[0]):
        # Every resample has this mean; scipy would warn about a degenerate distribution.
        return Interval(mean, mean, mean, n, confidence, resamples, seed)
    res = stats().bootstrap(
        (vs,),
        np.mean,
        n_resamples=resamples,
        confidence_level=confidence,
        method="percentile",
        vectorized=True,
        rng=np.random.default_rng(seed),
    )
    return Interval(
        mean, float(res.confidence_interval.low), float(res.confidence_interval.high), n, confidence, resamples, seed
    )


def system_intervals(by_system: Mapping[Hashable, Mapping[Hashable, float]], **options) -> dict[Hashable, Interval]:
    """system -> interval of its mean over its topics (``by_system[system][topic]`` = its score there).

    Every system is resampled with the same seed, so the result does not depend on the order of
    systems; systems with the same number of topics share one ``scipy.stats.bootstrap`` call (the
    same resampled positions as separate calls with that seed: scipy draws them once per call).
    """
    confidence = options.get("confidence", CONFIDENCE)
    resamples = options.get("resamples", MEAN_RESAMPLES)
    seed = options.get("seed", 0)
    _check(confidence, resamples)
    out = {}
    by_size: dict[int, list] = {}
    for system, by_topic in by_system.items():
        values = [float(v) for v in by_topic.values()]
        if len(values) < 2 or len(set(values)) == 1:
            out[system] = mean_interval(values, **options)
        else:
            by_size.setdefault(len(values), []).append((system, values))
    for n, group in by_size.items():
        sample = np.array([values for _, values in group])
        res = stats().bootstrap(
            (sample,),
            np.mean,
            n_resamples=resamples,
            confidence_level=confidence,
            method="percentile",
            vectorized=True,
            axis=-1,
            rng=np.random.default_rng(seed),
        )
        for i, (system, values) in enumerate(group):
            out[system] = Interval(
                math.fsum(values) / n,
                float(res.confidence_interval.low[i]),
                float(res.confidence_interval.high[i]),
                n,
                confidence,
                resamples,
                seed,
            )
    return {system: out[system] for system in by_system}


# --- correlations ----------------------------------------------------------------------------


def matrices(
    pairs: Mapping[tuple[Hashable, Hashable], tuple[float, float]],
) -> tuple[list, list, np.ndarray, np.ndarray]:
    """(systems, topics, X, Z) from (topic, system) -> (x, z); NaN where a system lacks a topic."""
    systems = sorted({s for _, s in pairs}, key=lambda k: (str(type(k)), str(k)))
    topics = sorted({t for t, _ in pairs}, key=lambda k: (str(type(k)), str(k)))
    row, col = {s: i for i, s in enumerate(systems)}, {t: j for j, t in enumerate(topics)}
    x = np.full((len(systems), len(topics)), np.nan)
    z = np.full_like(x, np.nan)
    for (t, s), (xv, zv) in pairs.items():
        x[row[s], col[t]], z[row[s], col[t]] = xv, zv
    return systems, topics, x, z


def _nanmean(a: np.ndarray, axis: int) -> np.ndarray:
    valid = np.isfinite(a)
    count = valid.sum(axis=axis)
    total = np.where(valid, a, 0.0).sum(axis=axis)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count > 0, total / np.maximum(count, 1), np.nan)


def level_correlation(x: np.ndarray, z: np.ndarray, level: str, method: str) -> np.ndarray:
    """The correlation at ``level`` of each replicate: x, z of shape (replicates, systems, topics)."""
    func = METHODS[method]
    if level == "system":
        return func(_nanmean(x, 2), _nanmean(z, 2))
    if level == "summary":
        reps, systems, topics = x.shape
        per_topic = func(
            x.transpose(0, 2, 1).reshape(reps * topics, systems), z.transpose(0, 2, 1).reshape(reps * topics, systems)
        ).reshape(reps, topics)
        return _nanmean(per_topic, 1)
    raise ValueError(f"level must be one of {LEVELS}, not {level!r}")


def correlation_interval(
    pairs: Mapping[tuple[Hashable, Hashable], tuple[float, float]],
    level: str,
    method: str,
    *,
    confidence: float = CONFIDENCE,
    resamples: int = CORRELATION_RESAMPLES,
    seed: int = 0,
) -> Interval:
    """The ``level`` correlation of the two metrics with its bootstrap interval (module docstring).

    ``pairs`` maps (topic, system) to the two metric values (``scoring.metaeval.Pairs.values``).
    ``value`` is the correlation on the data as observed (equal to ``scoring.metaeval``'s).
    """
    _check(confidence, resamples)
    if level not in LEVELS:
        raise ValueError(f"level must be one of {LEVELS}, not {level!r}")
    if method not in METHODS:
        raise ValueError(f"method must be one of {sorted(METHODS)}, not {method!r}")
    systems, topics, x, z = matrices(pairs)
    n = len(systems) if level == "system" else len(topics)
    observed = float(level_correlation(x[None], z[None], level, method)[0]) if systems else math.nan
    value = None if math.isnan(observed) else observed
    if value is None:
        return Interval(None, None, None, n, confidence, resamples, seed, "the correlation is undefined on the data")
    rng = np.random.default_rng(seed)
    rows = rng.integers(0, len(systems), (resamples, len(systems)))
    drawn = np.zeros((resamples, len(systems)))
    np.add.at(drawn, (np.arange(resamples)[:, None], rows), 1)  # how often each system is drawn
    if level == "system":
        values = repeated(_nanmean(x, 1)[None], _nanmean(z, 1)[None], drawn[:, None, :], method)[:, 0]
    else:
        cols = rng.integers(0, len(topics), (resamples, len(topics)))
        times = np.zeros((resamples, len(topics)))
        np.add.at(times, (np.arange(resamples)[:, None], cols), 1)  # how often each topic is drawn
        per_topic = repeated(x.T, z.T, drawn[:, None, :], method)  # (resamples, topics)
        defined = np.isfinite(per_topic)
        count = np.where(defined, times, 0.0).sum(1)
        with np.errstate(invalid="ignore", divide="ignore"):
            values = np.where(
                count > 0, np.where(defined, per_topic * times, 0.0).sum(1) / np.maximum(count, 1), np.nan
            )
    defined = values[np.isfinite(values)]
    undefined = resamples - len(defined)
    if len(defined) == 0:
        return Interval(value, None, None, n, confidence, resamples, seed, "undefined on every resample", undefined)
    alpha = (1 - confidence) / 2
    low, high = np.quantile(defined, [alpha, 1 - alpha])
    return Interval(value, float(low), float(high), n, confidence, resamples, seed, None, undefined)
