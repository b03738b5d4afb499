"""Paired permutation tests, Holm's correction and groups, against hand computations and a direct
enumeration of sign patterns (scipy's permutation_test as an oracle: the code does not call it)."""

import itertools

import numpy as np
import pytest
from scipy import stats

from scoring.significance import (
    Comparison,
    PairedTest,
    groups,
    holm,
    paired_test,
    pairwise,
    scu_test,
    sign_flip_p_value,
)


def enumerate_p(a, b):
    """Every sign pattern of the differences: share of |sum| at least the observed one."""
    d = np.asarray(a, float) - np.asarray(b, float)
    observed = abs(d.sum())
    sums = [abs(np.dot(signs, d)) for signs in itertools.product([-1, 1], repeat=len(d))]
    return sum(s >= observed - 1e-12 for s in sums) / len(sums)


def test_hand_made_case():
    # Differences 0.3, 0.1, 0.2, 0.4: only the all-plus and all-minus patterns reach |sum| = 1.0,
    # so p = 2 / 16.
    got = paired_test([0.5, 0.3, 0.4, 0.6], [0.2, 0.2, 0.2, 0.2])
    assert got.p_value == pytest.approx(2 / 16) and got.exact and got.n == 4
    assert got.difference == pytest.approx(0.25)


def test_exact_p_values_match_enumeration_and_scipy():
    rng = np.random.default_rng(2)
    for n in (3, 6, 9, 12):
        a, b = rng.random(n), rng.random(n)
        got = paired_test(a, b)
        oracle = stats.permutation_test(
            (a, b),
            lambda x, y, axis: np.mean(x - y, axis=axis),
            permutation_type="samples",
            vectorized=True,
            n_resamples=10**6,
        ).pvalue
        assert got.exact
        assert got.p_value == pytest.approx(enumerate_p(a, b), abs=1e-12)
        assert got.p_value == pytest.approx(oracle, abs=1e-12)


def test_equal_sized_differences_use_the_binomial_and_agree_with_enumeration():
    a = [1, 1, 1, 0, 0, 1, 1, 1, 1, 0, 1]
    b = [0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0]
    got = paired_test(a, b)
    assert got.exact and got.p_value == pytest.approx(enumerate_p(a, b))


def every_pattern_p(d):
    """The definition on all 2^n patterns: the sums of every pattern, built one difference at a time."""
    sums = np.zeros(1)
    for x in d:
        sums = np.concatenate([sums + x, sums - x])
    return float(np.mean(np.abs(sums) >= abs(np.sum(d)) - 1e-12))


@pytest.mark.parametrize("n", [20, 23])
def test_exact_for_a_duc_year_of_topics(n):
    # 20 / 23 topics (DUC 2006 / 2007): every one of the 2^n patterns counts, the values have ties
    # (scores rounded to 1/100) so patterns reach the observed sum exactly.
    rng = np.random.default_rng(n)
    a, b = np.round(rng.random(n), 2), np.round(rng.random(n) * 0.8, 2)
    got = paired_test(a, b)
    assert got.exact and got.p_value == pytest.approx(every_pattern_p((a - b)[a != b]), abs=1e-12)
    # A tiny p-value, resolved (9,999 sampled patterns could say no less than 1e-4).
    tiny = paired_test(a + 1, b)  # every difference positive: only all-plus and all-minus reach the sum
    assert tiny.exact and tiny.p_value == pytest.approx(2 / 2**n)


def test_sampled_p_value_is_close_to_the_exact_one_and_reproducible():
    rng = np.random.default_rng(5)
    d = rng.random(16) + 0.1 - rng.random(16)
    exact = every_pattern_p(d)
    got = sign_flip_p_value(d, resamples=20000, seed=3, exact_up_to=0)
    assert not got[1] and got[0] == pytest.approx(exact, abs=0.01)
    assert sign_flip_p_value(d, resamples=20000, seed=3, exact_up_to=0) == got
    assert got[0] > 0
    # Beyond EXACT_UP_TO differences the test samples.
    many = paired_test(rng.random(40), rng.random(40), resamples=2000, seed=1)
    assert not many.exact and many.resamples == 2000


def test_sampled_p_values_below_their_resolution_are_hoeffdings_bound():
    # 46 topics (a TAC year), 60 systems: 1,770 pairs, Holm's first threshold 0.05 / 1770 = 2.8e-5,
    # below the 1e-4 that 9,999 sampled patterns can say: clearly different systems must still differ.
    rng = np.random.default_rng(7)
    data = {str(i): {t: float(0.1 + 0.4 * i / 59 + rng.normal(0, 0.08)) for t in range(46)} for i in range(60)}
    comparisons = pairwise(data, seed=1)
    assert sum(c.significant for c in comparisons) > 800
    strong = max(comparisons, key=lambda c: abs(c.test.difference))
    d = np.array([data[strong.a][t] - data[strong.b][t] for t in range(46)])
    assert strong.test.p_value == pytest.approx(2 * np.exp(-(d.sum() ** 2) / (2 * np.dot(d, d))))
    # The bound never undercuts the exact p-value (22 differences, sampled on purpose: the bound is
    # at least 2 exp(-n / 2), below 1e-4 from 20 differences on); above the resolution the sampled
    # value stands.
    bounded = 0
    for shift in (0.02, 0.05, 0.1, 1.0):
        d = rng.normal(shift, 0.05, 22)
        p, exact = sign_flip_p_value(d, exact_up_to=0)
        assert not exact
        if p < 1e-4:
            bounded += 1
            assert p == pytest.approx(2 * np.exp(-(d.sum() ** 2) / (2 * np.dot(d, d)))) and p >= every_pattern_p(d)
        else:
            assert p == pytest.approx(every_pattern_p(d), abs=0.01)
    assert bounded == 1


def test_identical_and_empty():
    assert paired_test([0.2, 0.3], [0.2, 0.3]).p_value == 1.0
    empty = paired_test([], [])
    assert empty.p_value is None and empty.reason


def test_holm_by_hand():
    # sorted 0.005, 0.01, 0.03, 0.04 -> x4, x3, x2, x1 = 0.02, 0.03, 0.06, 0.04 -> running max 0.06
    assert holm([0.01, 0.04, None, 0.03, 0.005]) == pytest.approx([0.03, 0.06, None, 0.06, 0.02])
    assert holm([0.5, 0.9]) == [1.0, 1.0]
    assert holm([]) == []


def _comparison(a, b, p):
    return Comparison(a, b, PairedTest(5, 0.1, p, True, 9999, 0), p, 0.05)


def test_groups_are_maximal_runs_without_a_significant_pair():
    order = ["A", "B", "C", "D", "E"]
    significant = {("A", "C"), ("A", "D"), ("A", "E"), ("B", "D"), ("B", "E"), ("C", "E")}
    comparisons = [
        _comparison(a, b, 0.001 if (a, b) in significant else 0.5) for a, b in itertools.combinations(order, 2)
    ]
    assert groups(order, comparisons) == [["A", "B"], ["B", "C"], ["C", "D"], ["D", "E"]]
    assert groups(order, [_comparison(a, b, 0.5) for a, b in itertools.combinations(order, 2)]) == [order]
    assert groups(["A", "B"], [_comparison("A", "B", 0.01)]) == [["A"], ["B"]]


def test_pairwise_tests_shared_topics_and_adjusts():
    data = {
        "good": {f"t{i}": 0.5 + 0.01 * i for i in range(10)},
        "bad": {f"t{i}": 0.1 + 0.01 * (i % 3) for i in range(10)},
        "twin": {f"t{i}": 0.5 + 0.01 * i + (0.001 if i % 2 else -0.001) for i in range(8)},
    }
    found = {(c.a, c.b): c for c in pairwise(data)}
    good_bad = found[("good", "bad")]
    assert good_bad.test.n == 10 and good_bad.test.p_value == pytest.approx(2 / 2**10)
    assert good_bad.significant and good_bad.better == "good"
    twin = found[("good", "twin")]
    assert twin.test.n == 8 and not twin.significant and twin.better is None
    raw = [c.test.p_value for c in found.values()]
    assert [c.p_holm for c in found.values()] == pytest.approx(holm(raw))


def test_scu_level_test_pairs_scus_over_topics():
    vectors = {
        "A": {"t1": [1, 1, 0, 1], "t2": [1, 0, 1], "t3": [1, 1]},
        "B": {"t1": [0, 1, 0, 0], "t2": [0, 0, 1]},
    }
    got = scu_test("A", "B", vectors)
    assert (got.topics, got.scus, got.only_a, got.only_b) == (2, 7, 3, 0)
    a = [1, 1, 0, 1, 1, 0, 1]
    b = [0, 1, 0, 0, 0, 0, 1]
    assert got.test.p_value == pytest.approx(enumerate_p(a, b)) == pytest.approx(2 / 8)
    with pytest.raises(ValueError):
        scu_test("A", "B", {"A": {"t": [1, 0]}, "B": {"t": [1]}})
    assert scu_test("A", "B", {"A": {"t": [1]}, "B": {"u": [1]}}).test.p_value is None
