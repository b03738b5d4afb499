"""Aggregates over topics: system scores with their spread, and the tier histogram of a pyramid.

A system score is the mean of the system's scores over the topics it was evaluated on
(``docs/pyramid-method.md``, "Aggregates"); a mean alone hides how many topics it rests on and how
much the topics disagree, so every mean here carries its number of topics, the sample standard
deviation, the minimum and the maximum (what a spread plot draws).

Pure Python, no Django: the dashboards feed it the rows of ``annotation.peers.results`` and the
meta-evaluation (``scoring.metaeval``) reuses the same averaging, so "a system's score" means one
thing everywhere.
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from .model import Convention, Pyramid


@dataclass(frozen=True)
class Spread:
    """Mean of some values with what a reader needs to judge it.

    ``sd`` is the SAMPLE standard deviation (n - 1 in the denominator: the topics are a sample of
    possible inputs); it is None below two values, as are all figures of an empty list.
    """

    n: int
    mean: float | None
    sd: float | None
    min: float | None
    max: float | None

    def as_dict(self) -> dict:
        return {name: getattr(self, name) for name in self.__dataclass_fields__}


def spread(values: Iterable[float]) -> Spread:
    """n, mean, sample sd, min and max of finite values (``math.fsum`` for an exact-as-can-be mean)."""
    vs = [float(v) for v in values]
    if not all(math.isfinite(v) for v in vs):
        raise ValueError("values must be finite numbers")
    if not vs:
        return Spread(0, None, None, None, None)
    sd = statistics.stdev(vs) if len(vs) >= 2 else None
    return Spread(len(vs), math.fsum(vs) / len(vs), sd, min(vs), max(vs))


def topic_means(items: Iterable[tuple[Hashable, Hashable, float | None]]) -> dict[tuple, float]:
    """(topic, system) -> mean of its defined values; undefined (None) values are left out.

    Why: one summary can have several scores in one topic (two annotators, as DUC 2006 D0631; two
    pyramids) and must count once per topic, or doubly annotated topics would weigh more in the
    system mean. A (topic, system) with no defined value is absent, not 0.
    """
    groups: dict[tuple, list[float]] = defaultdict(list)
    for topic, system, value in items:
        if value is None:
            continue
        if not math.isfinite(float(value)):
            raise ValueError(f"{topic}/{system}: {value!r} is not a finite number (use None for undefined)")
        groups[(topic, system)].append(float(value))
    return {key: math.fsum(vs) / len(vs) for key, vs in groups.items()}


@dataclass(frozen=True)
class SystemScore:
    """A system's mean over topics, its spread, and the per-topic values behind it."""

    system: Hashable
    spread: Spread
    by_topic: Mapping[Hashable, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "by_topic", MappingProxyType(dict(self.by_topic)))

    @property
    def topics(self) -> int:
        return self.spread.n

    @property
    def mean(self) -> float | None:
        return self.spread.mean

    def as_dict(self) -> dict:
        return {"system": self.system, **self.spread.as_dict(), "by_topic": dict(self.by_topic)}


def system_scores(items: Iterable[tuple[Hashable, Hashable, float | None]]) -> dict[Hashable, SystemScore]:
    """system -> mean over topics of its per-topic means (see :func:`topic_means`), with spread.

    ``items`` are (topic, system, value) triples, value None when undefined (left out).
    """
    per_system: dict[Hashable, dict[Hashable, float]] = defaultdict(dict)
    for (topic, system), value in topic_means(items).items():
        per_system[system][topic] = value
    return {system: SystemScore(system, spread(by_topic.values()), by_topic) for system, by_topic in per_system.items()}


def tier_histogram(pyramid: Pyramid, convention: Convention = Convention.NIST) -> dict[int, int]:
    """weight -> number of SCUs of that weight, for every weight from 1 to the largest tier.

    Empty tiers are kept (0) so a histogram shows the gaps; the top is max(n, heaviest SCU) because
    under NIST a legacy SCU with two contributors from one reference can outweigh n. SCUs that take
    no part in scoring under ``convention`` (dropped by SacreROUGE's reader) are not counted, so the
    histogram describes the pyramid the scores were computed with.
    """
    weights = pyramid.weights(convention).values()
    top = max([pyramid.n, *weights])
    counts = dict.fromkeys(range(1, top + 1), 0)
    for w in weights:
        counts[w] += 1
    return counts
