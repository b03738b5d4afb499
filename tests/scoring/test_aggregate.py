"""scoring.aggregate against independent computations (numpy, collections) and hand cases."""

import math
import random
from collections import Counter

import numpy as np
import pytest
from hypothesis import given

from scoring.aggregate import spread, system_scores, tier_histogram, topic_means
from scoring.model import Convention, Pyramid

from tests.scoring._strategies import pyramids


@pytest.mark.parametrize("seed", range(10))
def test_spread_equals_numpy(seed):
    rng = random.Random(seed)
    values = [rng.random() for _ in range(rng.randint(2, 30))]
    s = spread(values)
    assert s.n == len(values)
    assert s.mean == pytest.approx(np.mean(values), abs=1e-12)
    assert s.sd == pytest.approx(np.std(values, ddof=1), abs=1e-12)  # sample sd
    assert (s.min, s.max) == (min(values), max(values))


def test_spread_of_few_values():
    assert spread([]).as_dict() == {"n": 0, "mean": None, "sd": None, "min": None, "max": None}
    assert spread([0.25]).as_dict() == {"n": 1, "mean": 0.25, "sd": None, "min": 0.25, "max": 0.25}
    with pytest.raises(ValueError):
        spread([0.1, math.nan])


def test_topic_means_average_duplicates_and_skip_undefined():
    items = [("T1", "a", 0.2), ("T1", "a", 0.4), ("T1", "b", None), ("T2", "a", 0.5), ("T2", "b", 0.1)]
    assert topic_means(items) == {("T1", "a"): pytest.approx(0.3), ("T2", "a"): 0.5, ("T2", "b"): 0.1}
    with pytest.raises(ValueError, match="finite"):
        topic_means([("T1", "a", float("inf"))])


def test_system_scores_hand_case():
    # a: T1 annotated twice (0.2, 0.4 -> 0.3) and T2 0.5 -> mean 0.4 over 2 topics, not (0.2+0.4+0.5)/3.
    items = [
        ("T1", "a", 0.2),
        ("T1", "a", 0.4),
        ("T2", "a", 0.5),
        ("T1", "b", 0.1),
        ("T2", "b", None),
        ("T3", "b", 0.3),
    ]
    scores = system_scores(items)
    a, b = scores["a"], scores["b"]
    assert a.topics == 2 and a.mean == pytest.approx(0.4)
    assert a.spread.sd == pytest.approx(math.sqrt(((0.3 - 0.4) ** 2 + (0.5 - 0.4) ** 2) / 1))
    assert (a.spread.min, a.spread.max) == (pytest.approx(0.3), 0.5)
    assert dict(a.by_topic) == {"T1": pytest.approx(0.3), "T2": 0.5}
    assert b.topics == 2 and b.mean == pytest.approx(0.2) and set(b.by_topic) == {"T1", "T3"}
    assert a.as_dict()["n"] == 2 and a.as_dict()["system"] == "a"


@pytest.mark.parametrize("seed", range(5))
def test_system_scores_equal_numpy_nanmean(seed):
    """Independent form: a systems x topics matrix with NaN holes, averaged with numpy."""
    rng = random.Random(seed)
    systems, topics = [f"s{i}" for i in range(6)], [f"T{j}" for j in range(8)]
    matrix = np.array([[rng.random() if rng.random() > 0.2 else np.nan for _ in topics] for _ in systems])
    items = [
        (t, s, None if np.isnan(matrix[i, j]) else float(matrix[i, j]))
        for i, s in enumerate(systems)
        for j, t in enumerate(topics)
    ]
    scores = system_scores(items)
    for i, s in enumerate(systems):
        row = matrix[i][~np.isnan(matrix[i])]
        assert scores[s].topics == len(row)
        assert scores[s].mean == pytest.approx(row.mean(), abs=1e-12)
        assert scores[s].spread.sd == pytest.approx(row.std(ddof=1), abs=1e-12)


def test_tier_histogram_hand_cases():
    p = Pyramid.of("ABCD", {1: ["A", "B", "C", "D"], 2: ["A", "B"], 3: ["C"], 4: ["D"], 5: ["B", "C"]})
    assert tier_histogram(p) == {1: 2, 2: 2, 3: 0, 4: 1}  # empty tier 3 kept
    # Legacy: two contributors from A (NIST weight 3 > ... counted as they stand; SacreROUGE drops the SCU)
    # and a cross-reference contributor (NIST weight 1; SacreROUGE drops it and then the empty SCU).
    legacy = Pyramid.of("AB", {1: ["A", "A", "B"], 2: [("A", "B")], 3: ["A"]})
    assert tier_histogram(legacy, Convention.NIST) == {1: 2, 2: 0, 3: 1}
    assert tier_histogram(legacy, Convention.SACREROUGE) == {1: 1, 2: 0}
    assert tier_histogram(Pyramid.of("ABC", {})) == {1: 0, 2: 0, 3: 0}


@given(pyramids(legacy=True))
def test_tier_histogram_counts_every_weight(p):
    for convention in Convention:
        weights = p.weights(convention).values()
        hist = tier_histogram(p, convention)
        assert {w: k for w, k in hist.items() if k} == dict(Counter(weights))
        assert sorted(hist) == list(range(1, max([p.n, *weights]) + 1))
