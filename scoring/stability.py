"""Would the ranking hold with other references or other topics? Stability curves of a ranking.

The full ranking orders systems by their mean score over all topics, each topic scored against
the pyramid of all its references. A curve point asks how close (Kendall's tau-b) the ranking
comes when less evidence is used:

* ``reference_stability``: pyramids built from k of a topic's n references, for each k < n
  (Section 3 of Nenkova, Passonneau & McKeown 2007, who argue for 4 or more references). The
  other references' contributors are removed and SCUs left without contributors vanish, as the
  jackknife does (``Pyramid.restricted_to``, behind ``without_reference``); a peer's matches of vanished SCUs count
  nowhere.
  Per topic every k-subset is scored when there are at most ``max_subsets`` of them, else a seeded
  sample of ``max_subsets`` distinct subsets. A ranking needs one pyramid per topic: each of the
  ``draws`` rankings picks, per topic, one of its subsets at random (seeded).
* ``topic_stability``: ``draws`` random subsets of k topics (without replacement) for each k below
  the number of topics; systems ranked by their mean over the subset's topics (a system with none
  of the subset's topics is left out of that ranking).

Each point carries the mean tau, its standard deviation and the 5th-95th percentiles over the
draws (the spread a plot shows), how many draws it rests on and the seed. Rankings where tau is
undefined (fewer than 3 systems, or all tied) are counted apart, never averaged in.
Randomness: ``numpy.random.default_rng(seed)``, one generator for the whole curve, used in the
order of k.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Hashable, Mapping, MutableMapping, Sequence
from dataclasses import dataclass

import numpy as np

from .batch_correlation import kendall_rows
from .model import Convention, PeerAnnotation, Pyramid
from .scores import modified_against

DRAWS = 200
MAX_SUBSETS = 20


@dataclass(frozen=True)
class CurvePoint:
    """Kendall tau-b between the rankings from k units (references or topics) and the full ranking."""

    k: int
    mean: float | None
    sd: float | None
    low: float | None  # 5th percentile of tau over the draws
    high: float | None  # 95th percentile
    draws: int  # draws where tau is defined
    undefined: int  # draws where it is not
    subsets: int | None = None  # references: k-subsets scored per topic (the most over topics)

    def as_dict(self) -> dict:
        return {name: getattr(self, name) for name in self.__dataclass_fields__}


def _point(k: int, taus: np.ndarray, subsets: int | None = None) -> CurvePoint:
    defined = taus[np.isfinite(taus)]
    undefined = len(taus) - len(defined)
    if not len(defined):
        return CurvePoint(k, None, None, None, None, 0, undefined, subsets)
    sd = float(np.std(defined, ddof=1)) if len(defined) > 1 else None
    low, high = np.quantile(defined, [0.05, 0.95])
    return CurvePoint(
        k, float(math.fsum(defined) / len(defined)), sd, float(low), float(high), len(defined), undefined, subsets
    )


def _nanmean(a: np.ndarray, axis: int) -> np.ndarray:
    valid = np.isfinite(a)
    count = valid.sum(axis=axis)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count > 0, np.where(valid, a, 0.0).sum(axis=axis) / np.maximum(count, 1), np.nan)


def _order(key: Hashable) -> tuple[str, str]:
    return str(type(key)), str(key)


def topic_stability(
    by_system: Mapping[Hashable, Mapping[Hashable, float]],
    *,
    sizes: Sequence[int] | None = None,
    draws: int = DRAWS,
    seed: int = 0,
) -> list[CurvePoint]:
    """Tau between the ranking over k random topics and the ranking over all, for each k in ``sizes``
    (default: 1 .. topics - 1). ``by_system[system][topic]`` = the system's score on the topic."""
    systems = list(by_system)
    topics = sorted({t for scores in by_system.values() for t in scores}, key=_order)
    matrix = np.full((len(systems), len(topics)), np.nan)
    col = {t: j for j, t in enumerate(topics)}
    for i, s in enumerate(systems):
        for t, v in by_system[s].items():
            matrix[i, col[t]] = v
    full = _nanmean(matrix, 1)
    sizes = list(range(1, len(topics))) if sizes is None else [k for k in sizes if 1 <= k < len(topics)]
    rng = np.random.default_rng(seed)
    out = []
    for k in sizes:
        chosen = np.argsort(rng.random((draws, len(topics))), axis=1)[:, :k]  # k distinct topics per draw
        means = _nanmean(matrix[:, chosen], 2).T  # (draws, systems)
        out.append(_point(k, kendall_rows(np.broadcast_to(full, means.shape), means)))
    return out


@dataclass(frozen=True)
class TopicAnnotations:
    """One topic's pyramid (all its references) and its peers' annotations: (system, annotation) pairs;
    a system annotated several times (two annotators) is scored by the mean of its annotations."""

    pyramid: Pyramid
    annotations: Sequence[tuple[Hashable, PeerAnnotation]]


def _subsets(references: Sequence[str], k: int, max_subsets: int, rng: np.random.Generator) -> list[tuple[str, ...]]:
    count = math.comb(len(references), k)
    if count <= max_subsets:
        return list(itertools.combinations(references, k))
    chosen: set[tuple[str, ...]] = set()
    while len(chosen) < max_subsets:
        picked = rng.choice(len(references), size=k, replace=False)
        chosen.add(tuple(references[i] for i in sorted(picked)))
    return sorted(chosen)


def _system_means(pyramid: Pyramid, annotations, convention: Convention) -> dict[Hashable, float]:
    """system -> the mean of its annotations' modified scores against ``pyramid`` (systems with no
    score left out), summed in the annotations' order."""
    sums: dict[Hashable, float] = {}
    counts: dict[Hashable, int] = {}
    values = modified_against(pyramid, [a for _, a in annotations], convention)
    for (system, _), value in zip(annotations, values, strict=True):
        if value is not None:
            sums[system] = sums.get(system, 0.0) + value
            counts[system] = counts.get(system, 0) + 1
    return {system: sums[system] / counts[system] for system in sums}


def _system_scores(
    topic: TopicAnnotations,
    base,
    keep: tuple[str, ...] | None,
    systems: Sequence[Hashable],
    convention: Convention,
    kept: dict,
) -> np.ndarray:
    """The topic's systems' means against its pyramid of the references ``keep`` (None: all of them;
    ``base()`` gives the whole pyramid under ``convention``), NaN for a system without a score;
    computed once per (convention, keep) in ``kept``, the topic's entry of the memo."""
    means = kept.get((convention.value, keep))
    if means is None:
        pyramid = base() if keep is None else base().restricted_to(keep)
        means = kept[(convention.value, keep)] = _system_means(pyramid, topic.annotations, convention)
    return np.array([means.get(system, np.nan) for system in systems], dtype=float)


def _kept(memo: MutableMapping | None, topic: TopicAnnotations) -> dict:
    """The topic's entry of ``memo``, under its data (its pyramid and annotations, compared by value):
    found again by a topic whose data did not change. Moved last when found, so the caller can drop
    the entries used longest ago first."""
    if memo is None:
        return {}
    key = (topic.pyramid, tuple(topic.annotations))
    kept = memo.pop(key, None)
    memo[key] = kept = {} if kept is None else kept
    return kept


def reference_stability(
    topics: Mapping[Hashable, TopicAnnotations],
    convention: Convention = Convention.NIST,
    *,
    draws: int = DRAWS,
    max_subsets: int = MAX_SUBSETS,
    seed: int = 0,
    memo: MutableMapping | None = None,
) -> list[CurvePoint]:
    """Tau between the ranking from k-reference pyramids and the full ranking, for k = 1 .. max n - 1.

    A topic with no more than k references keeps all of them at that k (it has no smaller pyramid
    to offer). Scores are the modified score under ``convention``. ``memo``: a dict the caller keeps
    between curves, where each topic's scores per subset of its references are kept under the
    topic's data (the dashboard draws the curve again after a change in one topic: the others are
    not scored again); the curve is the same with or without it.
    """
    convention = Convention(convention)
    names = sorted(topics, key=_order)
    systems = sorted({s for t in names for s, _ in topics[t].annotations}, key=_order)
    bases: dict[Hashable, Pyramid] = {}

    def base(t: Hashable) -> Pyramid:
        """The topic's whole pyramid under the convention, built the first time it is needed (a
        topic whose every score is in the memo never needs it; its references are the same)."""
        if t not in bases:
            pyramid = topics[t].pyramid
            bases[t] = pyramid.as_sacrerouge() if convention is Convention.SACREROUGE else pyramid
        return bases[t]

    kept = {t: _kept(memo, topics[t]) for t in names}

    def scored(t: Hashable, keep: tuple[str, ...] | None) -> np.ndarray:
        return _system_scores(topics[t], lambda: base(t), keep, systems, convention, kept[t])

    full = np.stack([scored(t, None) for t in names], axis=1) if names else np.zeros((0, 0))
    full_means = _nanmean(full, 1) if names else np.zeros(0)
    rng = np.random.default_rng(seed)
    top = max((topics[t].pyramid.n for t in names), default=0)
    out = []
    for k in range(1, top):
        per_topic = []  # per topic: (subsets, systems) scores
        most = 0
        for j, t in enumerate(names):
            references = topics[t].pyramid.references
            if len(references) <= k:
                per_topic.append(full[:, j][None, :])
                continue
            subsets = _subsets(references, k, max_subsets, rng)
            most = max(most, len(subsets))
            per_topic.append(np.stack([scored(t, keep) for keep in subsets]))
        picks = [rng.integers(0, len(scores), draws) for scores in per_topic]
        sample = np.stack(
            [scores[pick] for scores, pick in zip(per_topic, picks, strict=True)], axis=1
        )  # (draws, topics, systems)
        means = _nanmean(sample, 1)
        out.append(_point(k, kendall_rows(np.broadcast_to(full_means, means.shape), means), most))
    return out
