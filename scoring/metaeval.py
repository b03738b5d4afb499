"""Meta-evaluation: how well one metric (the pyramid score) agrees with another judgment of the
same summaries (content responsiveness, ROUGE, ...), at summary level and at system level.

Definitions follow SacreROUGE's ``correlate`` command (``sacrerouge/commands/correlate.py`` and
``sacrerouge/stats.py`` in github.com/danieldeutsch/sacrerouge), so our tables read like its tables:

* scores of the same (topic, summarizer) are merged first and a metric given several times is
  averaged (SacreROUGE ``merge_metrics`` + ``average_values``; here: two annotators of one peer);
* only (topic, summarizer) items that have BOTH metrics take part (``filter_metrics``); the others
  are counted, not silently lost;
* summary level (``summary_level_corr``): for each topic, correlate the two metrics across that
  topic's summarizers, then take the plain mean over the topics whose correlation is defined.
  SacreROUGE skips NaN correlations and reports ``num_summary_groups``; we skip a topic when
  ``scoring.correlation`` finds the correlation undefined (fewer than 3 summaries, or one metric
  constant in the topic) and report both the topics used and the topics skipped, with reasons;
* system level (``system_level_corr``): average each summarizer over its topics (over the same
  items for both metrics), then correlate across summarizers; n = number of summarizers.

Pearson, Spearman and Kendall (tau-b, as ``scipy.stats.kendalltau`` and SacreROUGE) come from
``scoring.correlation``; averaging over topics from ``scoring.aggregate``. No Django here.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import NamedTuple

from .aggregate import system_scores, topic_means
from .correlation import Correlation, kendall, pearson, spearman

METHODS: Mapping[str, Callable[[Sequence[float], Sequence[float]], Correlation]] = MappingProxyType(
    {"pearson": pearson, "spearman": spearman, "kendall": kendall}
)


class Observation(NamedTuple):
    """Metric values of one summary: ``values`` maps metric name -> value (None = undefined).

    ``system`` identifies the summarizer across topics (a peer system id, or a reference's letter);
    within a topic it also identifies the summary. A plain ``(topic, system, values)`` tuple works.
    """

    topic: Hashable
    system: Hashable
    values: Mapping[str, float | None]


@dataclass(frozen=True)
class Pairs:
    """(topic, system) -> (x, y) for the items that have both metrics, and what was left out."""

    x: str
    y: str
    values: Mapping[tuple, tuple[float, float]]
    only_x: int  # items with x but no y
    only_y: int  # items with y but no x

    def __post_init__(self) -> None:
        object.__setattr__(self, "values", MappingProxyType(dict(self.values)))


def pair_metrics(observations: Iterable[Observation], x: str, y: str) -> Pairs:
    """Merge observations per (topic, system) (duplicates averaged) and keep items with both metrics."""
    obs = [Observation(*o) for o in observations]
    xs = topic_means((o.topic, o.system, o.values.get(x)) for o in obs)
    ys = topic_means((o.topic, o.system, o.values.get(y)) for o in obs)
    both = xs.keys() & ys.keys()
    return Pairs(x, y, {k: (xs[k], ys[k]) for k in both}, len(xs.keys() - both), len(ys.keys() - both))


def _order(key: Hashable) -> tuple[str, str]:
    """Deterministic order for mixed ids (correlations do not depend on it; outputs and tests do)."""
    return str(type(key)), str(key)


def _sorted(keys: Iterable[Hashable]) -> list:
    return sorted(keys, key=_order)


@dataclass(frozen=True)
class SummaryLevel:
    """Mean over topics of the per-topic correlation; ``topics`` says how many topics it averages."""

    method: str
    value: float | None
    topics: int  # topics whose correlation is averaged
    summaries: int  # (topic, system) items in those topics
    per_topic: Mapping[Hashable, Correlation] = field(default_factory=dict)
    skipped: Mapping[Hashable, str] = field(default_factory=dict)  # topic -> why it is left out
    reason: str | None = None  # why value is None

    def __post_init__(self) -> None:
        object.__setattr__(self, "per_topic", MappingProxyType(dict(self.per_topic)))
        object.__setattr__(self, "skipped", MappingProxyType(dict(self.skipped)))

    def as_dict(self) -> dict:
        return {
            "method": self.method,
            "value": self.value,
            "topics": self.topics,
            "topics_skipped": len(self.skipped),
            "summaries": self.summaries,
            "per_topic": {str(t): c.as_dict() for t, c in self.per_topic.items()},
            "skipped": {str(t): r for t, r in self.skipped.items()},
            "reason": self.reason,
        }


def summary_level(pairs: Pairs, method: str) -> SummaryLevel:
    """Correlate within each topic, then average the defined correlations over topics."""
    func = METHODS[method]
    by_topic: dict[Hashable, list[tuple[Hashable, float, float]]] = defaultdict(list)
    for (topic, system), (xv, yv) in pairs.values.items():
        by_topic[topic].append((system, xv, yv))
    used, skipped, summaries = {}, {}, 0
    for topic in _sorted(by_topic):
        items = sorted(by_topic[topic], key=lambda item: _order(item[0]))
        c = func([xv for _, xv, _ in items], [yv for _, _, yv in items])
        if c.value is None:
            skipped[topic] = c.reason
        else:
            used[topic] = c
            summaries += c.n
    if not used:
        reason = f"no topic has a defined correlation ({len(skipped)} topic(s) skipped)"
        return SummaryLevel(method, None, 0, 0, {}, skipped, reason)
    value = math.fsum(c.value for c in used.values()) / len(used)
    return SummaryLevel(method, value, len(used), summaries, used, skipped)


@dataclass(frozen=True)
class SystemLevel:
    """Correlation across systems of their means over topics (``correlation.n`` = systems)."""

    correlation: Correlation
    topics: int  # distinct topics behind the means
    summaries: int  # (topic, system) items averaged
    x_means: Mapping[Hashable, float] = field(default_factory=dict)
    y_means: Mapping[Hashable, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "x_means", MappingProxyType(dict(self.x_means)))
        object.__setattr__(self, "y_means", MappingProxyType(dict(self.y_means)))

    def as_dict(self) -> dict:
        return {
            **self.correlation.as_dict(),
            "systems": self.correlation.n,
            "topics": self.topics,
            "summaries": self.summaries,
            "x_means": {str(s): v for s, v in self.x_means.items()},
            "y_means": {str(s): v for s, v in self.y_means.items()},
        }


def system_level(pairs: Pairs, method: str) -> SystemLevel:
    """Average each system over its (paired) topics with ``aggregate.system_scores``, then correlate."""
    x_scores = system_scores((t, s, xv) for (t, s), (xv, _) in pairs.values.items())
    y_scores = system_scores((t, s, yv) for (t, s), (_, yv) in pairs.values.items())
    systems = _sorted(x_scores)
    x_means = {s: x_scores[s].mean for s in systems}
    y_means = {s: y_scores[s].mean for s in systems}
    c = METHODS[method]([x_means[s] for s in systems], [y_means[s] for s in systems])
    topics = len({t for t, _ in pairs.values})
    return SystemLevel(c, topics, len(pairs.values), x_means, y_means)


@dataclass(frozen=True)
class MetaEvaluation:
    """Every correlation of metric ``x`` with metric ``y``, at both levels, by method name."""

    pairs: Pairs
    summary: Mapping[str, SummaryLevel]
    system: Mapping[str, SystemLevel]

    def as_dict(self) -> dict:
        return {
            "x": self.pairs.x,
            "y": self.pairs.y,
            "pairs": len(self.pairs.values),
            "only_x": self.pairs.only_x,
            "only_y": self.pairs.only_y,
            "summary_level": {m: r.as_dict() for m, r in self.summary.items()},
            "system_level": {m: r.as_dict() for m, r in self.system.items()},
        }


def meta_evaluate(
    observations: Iterable[Observation], x: str, y: str, methods: Iterable[str] = tuple(METHODS)
) -> MetaEvaluation:
    """Summary- and system-level correlations of ``x`` with ``y`` for each method."""
    methods = list(methods)
    unknown = [m for m in methods if m not in METHODS]
    if unknown:
        raise ValueError(f"unknown correlation method(s) {unknown}; known: {sorted(METHODS)}")
    pairs = pair_metrics(observations, x, y)
    return MetaEvaluation(
        pairs,
        {m: summary_level(pairs, m) for m in methods},
        {m: system_level(pairs, m) for m in methods},
    )
