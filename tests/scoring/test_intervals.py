"""Bootstrap intervals: a system mean over topics and meta-evaluation correlations, checked against
direct implementations written here (a percentile bootstrap in numpy; the documented resampling
protocol replayed with scipy's correlations)."""

import math

import numpy as np
import pytest
from scipy import stats

from scoring.intervals import correlation_interval, mean_interval, system_intervals
from scoring.metaeval import pair_metrics, summary_level, system_level


def test_mean_interval_agrees_with_a_direct_percentile_bootstrap():
    rng = np.random.default_rng(3)
    values = rng.gamma(2.0, 0.1, 20)  # skewed, like pyramid scores
    got = mean_interval(values, resamples=20000, seed=5)
    means = values[np.random.default_rng(11).integers(0, 20, (20000, 20))].mean(axis=1)
    low, high = np.quantile(means, [0.025, 0.975])
    assert got.value == pytest.approx(values.mean())
    assert got.low == pytest.approx(low, abs=0.004) and got.high == pytest.approx(high, abs=0.004)
    assert got.low < got.value < got.high and got.n == 20 and got.seed == 5


def test_mean_interval_is_reproducible_and_handles_degenerate_samples():
    values = [0.2, 0.25, 0.4, 0.1, 0.33]
    assert mean_interval(values, seed=9) == mean_interval(values, seed=9)
    other = mean_interval(values, seed=10)
    assert (mean_interval(values, seed=9).low, mean_interval(values, seed=9).high) != (other.low, other.high)
    same = mean_interval([0.0, 0.0, 0.0])
    assert (same.value, same.low, same.high) == (0.0, 0.0, 0.0)
    one = mean_interval([0.3])
    assert one.value == 0.3 and one.low is None and "single topic" in one.reason
    assert mean_interval([]).value is None
    with pytest.raises(ValueError):
        mean_interval([0.1, math.nan])


def test_system_intervals_do_not_depend_on_the_order_of_systems():
    data = {"a": {"t1": 0.1, "t2": 0.3, "t3": 0.2}, "b": {"t1": 0.5, "t2": 0.4, "t3": 0.6}}
    forward = system_intervals(data, resamples=500)
    backward = system_intervals(dict(reversed(list(data.items()))), resamples=500)
    assert forward == backward


def _pairs(seed=1, systems=8, topics=6, missing=0.1):
    rng = np.random.default_rng(seed)
    quality = rng.random(systems)
    out = {}
    for t in range(topics):
        for s in range(systems):
            if rng.random() < missing:
                continue
            x = quality[s] + rng.normal(0, 0.3)
            out[(f"T{t}", f"S{s}")] = (x, x + rng.normal(0, 0.3))
    return out


SCIPY = {"pearson": stats.pearsonr, "spearman": stats.spearmanr, "kendall": stats.kendalltau}


def _replay(pairs, level, method, resamples, seed):
    """The module's documented protocol, written out with scipy's correlations."""
    systems = sorted({s for _, s in pairs})
    topics = sorted({t for t, _ in pairs})
    rng = np.random.default_rng(seed)
    rows = rng.integers(0, len(systems), (resamples, len(systems)))
    cols = rng.integers(0, len(topics), (resamples, len(topics))) if level == "summary" else None
    values = []
    for b in range(resamples):
        sampled_topics = [topics[j] for j in cols[b]] if cols is not None else topics
        sampled_systems = [systems[i] for i in rows[b]]
        if level == "system":
            xs, zs = [], []
            for s in sampled_systems:
                cells = [pairs[(t, s)] for t in sampled_topics if (t, s) in pairs]
                xs.append(np.mean([c[0] for c in cells]))
                zs.append(np.mean([c[1] for c in cells]))
            r = SCIPY[method](xs, zs).statistic if len(set(xs)) > 1 and len(set(zs)) > 1 else math.nan
        else:
            per_topic = []
            for t in sampled_topics:
                cells = [pairs[(t, s)] for s in sampled_systems if (t, s) in pairs]
                xs, zs = [c[0] for c in cells], [c[1] for c in cells]
                if len(cells) >= 3 and len(set(xs)) > 1 and len(set(zs)) > 1:
                    per_topic.append(SCIPY[method](xs, zs).statistic)
            r = np.mean(per_topic) if per_topic else math.nan
        values.append(r)
    values = np.array(values)
    return np.quantile(values[np.isfinite(values)], [0.025, 0.975]), int((~np.isfinite(values)).sum())


@pytest.mark.parametrize("level", ["system", "summary"])
@pytest.mark.parametrize("method", ["pearson", "spearman", "kendall"])
def test_correlation_interval_replays_the_documented_bootstrap(level, method):
    pairs = _pairs()
    got = correlation_interval(pairs, level, method, resamples=150, seed=4)
    (low, high), undefined = _replay(pairs, level, method, 150, 4)
    assert got.low == pytest.approx(low, abs=1e-9) and got.high == pytest.approx(high, abs=1e-9)
    assert got.undefined_replicates == undefined
    # The point value is the meta-evaluation's own figure.
    metric_pairs = pair_metrics([(t, s, {"x": x, "z": z}) for (t, s), (x, z) in pairs.items()], "x", "z")
    expected = (
        system_level(metric_pairs, method).correlation.value
        if level == "system"
        else summary_level(metric_pairs, method).value
    )
    assert got.value == pytest.approx(expected, abs=1e-12)
    assert got.low <= got.value <= got.high


def test_correlation_interval_says_why_it_is_missing():
    flat = {(f"T{t}", f"S{s}"): (0.5, s) for t in range(3) for s in range(4)}
    got = correlation_interval(flat, "system", "pearson", resamples=50)
    assert got.value is None and got.low is None and "undefined" in got.reason
    with pytest.raises(ValueError):
        correlation_interval(flat, "corpus", "pearson")


def test_system_intervals_equal_one_call_per_system():
    rng = np.random.default_rng(4)
    data = {f"s{i}": {f"t{j}": float(v) for j, v in enumerate(rng.random(6 + i % 2))} for i in range(5)}
    data["flat"] = {"t0": 0.2, "t1": 0.2}
    data["one"] = {"t0": 0.5}
    batched = system_intervals(data, resamples=999, seed=3)
    assert batched == {s: mean_interval(list(v.values()), resamples=999, seed=3) for s, v in data.items()}
