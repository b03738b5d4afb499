"""scoring.metaeval: hand cases separating summary from system level, and scipy/numpy computations
in the matrix form SacreROUGE uses (summarizers x topics, NaN where a value is missing)."""

import math
import random

import numpy as np
import pytest
from scipy import stats

from scoring.metaeval import METHODS, Observation, meta_evaluate, pair_metrics, summary_level, system_level

SCIPY = {"pearson": stats.pearsonr, "spearman": stats.spearmanr, "kendall": stats.kendalltau}


def obs(topic, system, **values):
    return Observation(topic, system, values)


# T1 agrees perfectly (r = 1), T2 is perfectly reversed (r = -1): the summary level averages them to 0.
# T3 has two summaries only (skipped) but counts at system level; its values equal the systems' means
# so the hand computation stays simple: a = (0.3, 1), b = (0.25, 2), c = (0.2, 3) -> r = -1.
HAND = [
    obs("T1", "a", x=0.1, y=1),
    obs("T1", "b", x=0.2, y=2),
    obs("T1", "c", x=0.3, y=3),
    obs("T2", "a", x=0.5, y=1),
    obs("T2", "b", x=0.3, y=2),
    obs("T2", "c", x=0.1, y=3),
    obs("T3", "a", x=0.3, y=1),
    obs("T3", "b", x=0.25, y=2),
]


@pytest.mark.parametrize("method", ["pearson", "spearman", "kendall"])
def test_summary_and_system_level_differ_by_hand(method):
    m = meta_evaluate(HAND, "x", "y")
    s = m.summary[method]
    assert s.value == pytest.approx(0.0, abs=1e-12)
    assert (s.topics, s.summaries) == (2, 6)
    assert dict(s.skipped) == {"T3": "fewer than 3 pairs (n = 2)"}
    assert s.per_topic["T1"].value == pytest.approx(1.0) and s.per_topic["T2"].value == pytest.approx(-1.0)
    sys_ = m.system[method]
    assert sys_.correlation.value == pytest.approx(-1.0)
    assert (sys_.correlation.n, sys_.topics, sys_.summaries) == (3, 3, 8)
    assert dict(sys_.x_means) == {"a": pytest.approx(0.3), "b": pytest.approx(0.25), "c": pytest.approx(0.2)}
    assert dict(sys_.y_means) == {"a": 1, "b": 2, "c": 3}


def test_duplicates_are_averaged_and_unpaired_items_counted():
    rows = [
        obs("T1", "a", x=0.0),
        obs("T1", "a", x=0.2),
        obs("T1", "a", y=1.0),  # two annotators + a judgment
        obs("T1", "b", x=0.5, y=2.0),
        obs("T1", "c", x=0.4),  # c has no judgment
        ("T1", "d", {"y": 4.0}),
        obs("T1", "e", x=None, y=3.0),  # no score / undefined score
    ]
    pairs = pair_metrics(rows, "x", "y")
    assert dict(pairs.values) == {("T1", "a"): (pytest.approx(0.1), 1.0), ("T1", "b"): (0.5, 2.0)}
    assert (pairs.only_x, pairs.only_y) == (1, 2)


def test_constant_topic_is_skipped_with_reason_and_nothing_defined():
    rows = [obs("T1", s, x=v, y=2.0) for s, v in zip("abc", (0.1, 0.2, 0.3), strict=True)]
    m = meta_evaluate(rows, "x", "y", methods=["pearson"])
    assert m.summary["pearson"].value is None
    assert m.summary["pearson"].skipped == {"T1": "y is constant"}
    assert m.summary["pearson"].reason == "no topic has a defined correlation (1 topic(s) skipped)"
    assert m.system["pearson"].correlation.value is None and m.system["pearson"].correlation.reason == "y is constant"
    with pytest.raises(ValueError, match="unknown correlation"):
        meta_evaluate(rows, "x", "y", methods=["cosine"])


def _matrices(seed):
    """Random summarizers x topics matrices with holes, as SacreROUGE's convert_to_matrices builds."""
    rng = random.Random(seed)
    n_sys, n_top = rng.randint(4, 12), rng.randint(2, 9)
    X = np.full((n_sys, n_top), np.nan)
    Y = np.full((n_sys, n_top), np.nan)
    rows = []
    for i in range(n_sys):
        for j in range(n_top):
            if rng.random() < 0.25:
                continue
            x, y = rng.random(), float(rng.randint(1, 5))  # y has ties, like responsiveness
            X[i, j], Y[i, j] = x, y
            rows.append(obs(f"T{j}", f"s{i}", x=x, y=y))
    return X, Y, rows


@pytest.mark.parametrize("seed", range(15))
@pytest.mark.parametrize("method", ["pearson", "spearman", "kendall"])
def test_equal_to_scipy_on_matrices(seed, method):
    X, Y, rows = _matrices(seed)
    pairs = pair_metrics(rows, "x", "y")
    # Summary level: per topic (column) over the non-missing summarizers, skipping undefined ones.
    per_topic = []
    for j in range(X.shape[1]):
        keep = ~np.isnan(X[:, j])
        x, y = X[keep, j], Y[keep, j]
        if len(x) >= 3 and len(set(x)) > 1 and len(set(y)) > 1:
            per_topic.append(SCIPY[method](x, y).statistic)
    s = summary_level(pairs, method)
    if per_topic:
        assert s.value == pytest.approx(np.mean(per_topic), abs=1e-12)
    else:
        assert s.value is None
    assert s.topics == len(per_topic) and s.topics + len(s.skipped) == int((~np.isnan(X)).any(axis=0).sum())
    # System level: nanmean per summarizer (row), then one correlation across summarizers.
    present = (~np.isnan(X)).any(axis=1)
    xm, ym = np.nanmean(X[present], axis=1), np.nanmean(Y[present], axis=1)
    c = system_level(pairs, method).correlation
    assert c.n == int(present.sum())
    if len(set(ym)) > 1:
        expected = SCIPY[method](xm, ym)
        assert c.value == pytest.approx(expected.statistic, abs=1e-12)
        assert c.p_value == pytest.approx(expected.pvalue, abs=1e-12)


def test_methods_reuse_scoring_correlation():
    from scoring import correlation

    assert METHODS == {"pearson": correlation.pearson, "spearman": correlation.spearman, "kendall": correlation.kendall}


def test_as_dict_is_json_ready():
    import json

    d = meta_evaluate(HAND, "x", "y").as_dict()
    assert json.loads(json.dumps(d)) == d
    assert d["summary_level"]["pearson"]["topics"] == 2 and d["summary_level"]["pearson"]["topics_skipped"] == 1
    assert d["system_level"]["kendall"]["systems"] == 3 and not math.isnan(d["system_level"]["kendall"]["value"])
