"""Pyramid construction agreement: hand cases, brute-force cross-checks and properties.

The reference figures are computed here from the definitions, by brute force (every matching of
small cases enumerated, every item pair and item cluster looped over) and with the ``krippendorff``
package for alpha and ``scipy.stats`` for the correlations, never with the module's helpers.
"""

import dataclasses
import itertools
import math
import random

import krippendorff
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats

from scoring.agreement import NOT_COMPUTABLE_IDENTICAL
from scoring.correlation import NOISE
from scoring.pyramid_agreement import (
    Span,
    SpanContributor,
    SpanPyramid,
    SpanSCU,
    compare,
    pairwise,
    score_agreement,
)

from tests.conftest import shared_data
from tests.scoring._strategies import hsettings
from tests.scoring._tied_pyramids import PERMUTATIONS, content_figures, renumbered, span_pyramid, tied_pairs


def pyr(name, refs, scus):
    """``scus``: uid -> contributors, each a list of (reference, start, end) parts."""
    return SpanPyramid(
        name,
        tuple(refs),
        tuple(
            SpanSCU(uid, tuple(SpanContributor(tuple(Span(*p) for p in parts)) for parts in contribs))
            for uid, contribs in scus.items()
        ),
    )


# --- the definitions, written out directly ------------------------------------------------------


def contributors(p):
    return [((s.uid, i), c) for s in p.scus for i, c in enumerate(s.contributors)]


def chars(c):
    return {(sp.reference, k) for sp in c.spans for k in range(sp.start, sp.end)}


def dice(x, y):
    return 2 * len(chars(x) & chars(y)) / (len(chars(x)) + len(chars(y)))


def best_total_by_enumeration(a, b, threshold):
    """The largest total Dice of a one-to-one matching of eligible pairs: every matching tried."""
    ca, cb = contributors(a), contributors(b)
    best = 0.0
    slots = list(range(len(cb))) + [None] * len(ca)
    for choice in set(itertools.permutations(slots, len(ca))):
        total = 0.0
        for (_, x), j in zip(ca, choice, strict=True):
            if j is not None:
                d = dice(x, cb[j][1])
                if d < threshold:
                    break
                total += d
        else:
            best = max(best, total)
    return best


def brute_figures(a, b, aligned):
    """Pairwise, B-cubed and alpha from aligned ((uid_a, i), (uid_b, j)) pairs, straight from the
    definitions."""
    refs_a = {k: {sp.reference for sp in c.spans} for k, c in contributors(a)}
    refs_b = {k: {sp.reference for sp in c.spans} for k, c in contributors(b)}
    items = [(ka, kb, refs_a[ka] | refs_b[kb]) for ka, kb in aligned]
    same_a, same_b = [], []
    for x, y in itertools.combinations(items, 2):
        if x[2] & y[2]:
            continue
        same_a.append(x[0][0] == y[0][0])
        same_b.append(x[1][0] == y[1][0])
    both = sum(p and q for p, q in zip(same_a, same_b, strict=True))
    out = {"pairs": len(same_a), "together_a": sum(same_a), "together_b": sum(same_b), "together_both": both}
    out["pairwise_precision"] = both / sum(same_b) if sum(same_b) else None
    out["pairwise_recall"] = both / sum(same_a) if sum(same_a) else None
    precisions, recalls = [], []
    for x in items:
        cluster_a = {id(y) for y in items if y[0][0] == x[0][0]}
        cluster_b = {id(y) for y in items if y[1][0] == x[1][0]}
        precisions.append(len(cluster_a & cluster_b) / len(cluster_b))
        recalls.append(len(cluster_a & cluster_b) / len(cluster_a))
    out["bcubed_precision"] = sum(precisions) / len(items) if items else None
    out["bcubed_recall"] = sum(recalls) / len(items) if items else None
    data = np.array([same_a, same_b], dtype=float)
    out["alpha"] = (
        krippendorff.alpha(reliability_data=data, level_of_measurement="nominal")
        if data.size and len(np.unique(data)) > 1
        else None
    )
    return out


def f1(p, r):
    return None if p is None or r is None else (0.0 if p + r == 0 else 2 * p * r / (p + r))


def assert_figures(result, a, b):
    aligned = [(x.a, x.b) for x in result.contributors.aligned]
    expected = brute_figures(a, b, aligned)
    c = result.clustering
    for name, value in expected.items():
        got = c.alpha.value if name == "alpha" else getattr(c, name)
        assert got == pytest.approx(value), name
    assert c.pairwise_f1 == pytest.approx(f1(expected["pairwise_precision"], expected["pairwise_recall"]))
    assert c.bcubed_f1 == pytest.approx(f1(expected["bcubed_precision"], expected["bcubed_recall"]))


# --- hand cases -----------------------------------------------------------------------------------


def test_a_split_scu_by_hand():
    # A puts the three contributors in one SCU; B splits off R3's. Items 3, pairs 3 (three references):
    # together in A 3, in B 1, in both 1 -> pairwise precision 1, recall 1/3, F1 1/2.
    # B-cubed: R1, R2 items: |A(i)| = 3, |B(i)| = 2, common 2; R3: 3, 1, 1 ->
    # precision 1, recall (2/3 + 2/3 + 1/3) / 3 = 5/9, F1 = 2 * 5/9 / (14/9) = 5/7.
    a = pyr("A", "R1 R2 R3".split(), {1: [[("R1", 0, 10)], [("R2", 0, 10)], [("R3", 0, 10)]]})
    b = pyr("B", "R1 R2 R3".split(), {5: [[("R1", 0, 10)], [("R2", 0, 10)]], 6: [[("R3", 0, 10)]]})
    r = compare(a, b)
    c = r.clustering
    assert (c.items, c.pairs, c.together_a, c.together_b, c.together_both) == (3, 3, 3, 1, 1)
    assert (c.pairwise_precision, c.pairwise_recall, c.pairwise_f1) == pytest.approx((1, 1 / 3, 1 / 2))
    assert (c.bcubed_precision, c.bcubed_recall, c.bcubed_f1) == pytest.approx((1, 5 / 9, 5 / 7))
    assert [(m.a, m.b, m.shared) for m in r.scus.matched] == [(1, 5, 2)]
    assert (r.scus.unmatched_a, r.scus.unmatched_b, r.scus.identical) == ((), (6,), 0)
    assert (r.weights.n, r.weights.exact_share, r.weights.mean_abs_difference) == (1, 0.0, 1.0)
    assert r.weights.pearson.value is None and "fewer than 3" in r.weights.pearson.reason
    assert_figures(r, a, b)


def test_alignment_takes_the_largest_total_overlap_not_the_first_good_one():
    # A's x = [0, 10) (SCU 1) and y = [5, 15) (SCU 2); B's p = [0, 10) (7) and q = [0, 7) (8).
    # Dice: x-p 1, x-q 14/17, y-p 10/20 = 0.5 (eligible), y-q 4/17. Taking the best pair first
    # (x-p) leaves y alone, total 1; x-q plus y-p totals 1.32.
    a = pyr("A", ["R"], {1: [[("R", 0, 10)]], 2: [[("R", 5, 15)]]})
    b = pyr("B", ["R"], {7: [[("R", 0, 10)]], 8: [[("R", 0, 7)]]})
    ca, cb = contributors(a), contributors(b)
    assert [dice(x, y) for _, x in ca for _, y in cb] == pytest.approx([1, 14 / 17, 0.5, 4 / 17])
    r = compare(a, b)
    assert {(x.a, x.b) for x in r.contributors.aligned} == {((1, 0), (8, 0)), ((2, 0), (7, 0))}
    assert sum(x.dice for x in r.contributors.aligned) == pytest.approx(best_total_by_enumeration(a, b, 0.5))
    assert sum(x.dice for x in r.contributors.aligned) == pytest.approx(14 / 17 + 0.5)


def test_threshold_discontinuous_contributors_and_unmatched_sides():
    # A's first contributor has two parts (0-4 and 8-12); B covers 0-12 in one: common 8,
    # Dice 2 * 8 / (8 + 12) = 0.8. B's R2 contributor 20-40 overlaps A's 30-34 by 4: Dice 8 / 24 < 0.5.
    a = pyr("A", ["R1", "R2"], {1: [[("R1", 0, 4), ("R1", 8, 12)], [("R2", 30, 34)]], 2: [[("R2", 0, 5)]]})
    b = pyr("B", ["R1", "R2"], {3: [[("R1", 0, 12)], [("R2", 20, 40)]]})
    r = compare(a, b)
    assert [(x.a, x.b) for x in r.contributors.aligned] == [((1, 0), (3, 0))]
    assert r.contributors.aligned[0].dice == pytest.approx(0.8)
    assert (r.contributors.mean_dice, r.contributors.exact) == (pytest.approx(0.8), 0)
    assert r.contributors.unmatched_a == ((1, 1), (2, 0))
    assert r.contributors.unmatched_b == ((3, 1),)
    # at a threshold of 1/3 the R2 pair (Dice 1/3) is aligned too
    low = compare(a, b, threshold=1 / 3)
    assert {(x.a, x.b) for x in low.contributors.aligned} == {((1, 0), (3, 0)), ((1, 1), (3, 1))}
    # SCU 1 and SCU 3 now have the same two contributors up to the alignment: identical
    assert [(m.a, m.b, m.shared) for m in low.scus.matched] == [(1, 3, 2)] and low.scus.identical == 1
    assert low.scus.unmatched_a == (2,) and compare(a, b).scus.identical == 0
    assert_figures(low, a, b)


def test_scu_alignment_is_one_to_one_and_maximizes_shared_contributors():
    # shared: (A1, B9) = 3, (A1, B10) = 2, (A2, B9) = 2, (A2, B10) = 0. Taking the largest first
    # (A1-B9) leaves A2-B10, which shares nothing: total 3; A1-B10 plus A2-B9 totals 4.
    refs = ["R1", "R2", "R3", "R4", "R5", "R6"]
    a = pyr(
        "A", refs, {1: [[(r, 0, 9)] for r in ("R1", "R2", "R3", "R5", "R6")], 2: [[("R1", 20, 29)], [("R4", 0, 9)]]}
    )
    b = pyr(
        "B",
        refs,
        {
            9: [[("R1", 0, 9)], [("R2", 0, 9)], [("R3", 0, 9)], [("R1", 20, 29)], [("R4", 0, 9)]],
            10: [[("R5", 0, 9)], [("R6", 0, 9)]],
        },
    )
    r = compare(a, b)
    assert [(m.a, m.b, m.shared) for m in r.scus.matched] == [(1, 10, 2), (2, 9, 2)]
    shared = {
        (s, t): sum(1 for x in r.contributors.aligned if x.a[0] == s and x.b[0] == t) for s in (1, 2) for t in (9, 10)
    }
    best = max(sum(shared[s, t] for s, t in zip((1, 2), perm, strict=True)) for perm in itertools.permutations((9, 10)))
    assert sum(m.shared for m in r.scus.matched) == best
    assert_figures(r, a, b)


def test_weight_agreement_against_scipy():
    refs = [f"R{i}" for i in range(1, 5)]

    # A: SCUs of weight 4, 3, 2, 1; B the same contributors except one moved from SCU 2 to SCU 4.
    def seg(r, s):
        return [(r, 10 * s, 10 * s + 8)]

    a = pyr("A", refs, {s: [seg(r, s) for r in refs[: 5 - s]] for s in range(1, 5)})
    b = pyr(
        "B",
        refs,
        {
            1: [seg(r, 1) for r in refs],
            2: [seg(r, 2) for r in refs[:2]],
            3: [seg(r, 3) for r in refs[:2]],
            4: [seg(r, 4) for r in refs[:1]] + [seg("R3", 2)],
        },
    )
    r = compare(a, b)
    wa = [m.weight_a for m in r.scus.matched]
    wb = [m.weight_b for m in r.scus.matched]
    assert wa == [len(s.contributors) for s in a.scus] and wb == [len(s.contributors) for s in b.scus]
    assert r.weights.n == 4
    assert r.weights.exact_share == pytest.approx(np.mean(np.array(wa) == np.array(wb)))
    assert r.weights.mean_abs_difference == pytest.approx(np.mean(np.abs(np.array(wa) - np.array(wb))))
    assert r.weights.pearson.value == pytest.approx(stats.pearsonr(wa, wb).statistic)
    assert r.weights.spearman.value == pytest.approx(stats.spearmanr(wa, wb).statistic)
    assert_figures(r, a, b)


def test_score_agreement_pearson_interval_and_noise_share():
    a = {"p1": 0.50, "p2": 0.40, "p3": 0.70, "p4": 0.20, "p5": 0.90, "p6": 0.30, "gone": 0.1}
    b = {"p1": 0.52, "p2": 0.50, "p3": 0.60, "p4": 0.21, "p5": 0.80, "p6": None}
    s = score_agreement(a, b)
    peers = ["p1", "p2", "p3", "p4", "p5"]
    x, y = [a[p] for p in peers], [b[p] for p in peers]
    res = stats.pearsonr(x, y)
    ci = res.confidence_interval(0.95)
    assert s.n == 5 and set(s.missing) == {"p6", "gone"}
    assert (s.pearson.value, s.pearson.ci_low, s.pearson.ci_high) == pytest.approx((res.statistic, ci.low, ci.high))
    diffs = [abs(p - q) for p, q in zip(x, y, strict=True)]
    assert s.mean_abs_difference == pytest.approx(sum(diffs) / 5)
    assert s.noise == NOISE == 0.06
    assert s.above_noise == sum(d > 0.06 for d in diffs) == 3  # 0.1, 0.1, 0.1 exceed it; 0.02, 0.01 do not
    assert s.share_above_noise == pytest.approx(3 / 5)


def test_pairwise_covers_every_pair_once_and_rejects_other_references():
    ps = [pyr(n, ["R1", "R2"], {1: [[("R1", 0, 5)], [("R2", 0, 5)]]}) for n in "XYZ"]
    assert list(pairwise(ps)) == [("X", "Y"), ("X", "Z"), ("Y", "Z")]
    with pytest.raises(ValueError, match="unique"):
        pairwise([ps[0], ps[0]])
    with pytest.raises(ValueError, match="same references"):
        compare(ps[0], pyr("W", ["R1", "R9"], {}))
    with pytest.raises(ValueError, match="threshold"):
        compare(ps[0], ps[1], threshold=0)
    with pytest.raises(ValueError, match="empty span"):
        Span("R1", 4, 4)


# --- properties -----------------------------------------------------------------------------------

SEGMENTS = 5


@st.composite
def pyramid_pairs(draw):
    """Two pyramids over the same references and the same text segments (segment s of every reference
    is the characters [10 s, 10 s + 8)), each clustering the segments its own way (at most one
    contributor per reference per SCU); B's spans are shortened by 0-3 characters."""
    refs = [f"R{i}" for i in range(draw(st.integers(2, 4)))]
    present = {r: sorted(draw(st.sets(st.integers(0, SEGMENTS - 1), min_size=1))) for r in refs}

    def clustering(jitter):
        scus = {}
        for r in refs:
            order = draw(st.permutations(range(SEGMENTS)))
            for seg in present[r]:
                cut = draw(st.integers(0, 3)) if jitter else 0
                scus.setdefault(100 + order[seg], []).append([(r, 10 * seg, 10 * seg + 8 - cut)])
        return dict(sorted(scus.items()))

    return pyr("A", refs, clustering(False)), pyr("B", refs, clustering(True))


@hsettings(100)
@given(pyramid_pairs())
def test_random_pairs_match_the_brute_force_figures(pair):
    a, b = pair
    r = compare(a, b)
    assert len(r.contributors.aligned) == sum(len(s.contributors) for s in a.scus)  # every segment aligned
    assert_figures(r, a, b)


@hsettings(100)
@given(pyramid_pairs())
def test_identical_pyramids_agree_fully(pair):
    a, _ = pair
    twin = SpanPyramid("twin", a.references, a.scus)
    r = compare(a, twin)
    c = r.clustering
    assert not r.contributors.unmatched_a and not r.contributors.unmatched_b
    assert all(x.dice == 1 for x in r.contributors.aligned)
    if c.together_a:
        assert c.pairwise_precision == c.pairwise_recall == c.pairwise_f1 == 1
    if 0 < c.together_a < c.pairs:
        assert c.alpha.value == 1
    else:  # every pair valued alike: alpha is undefined, and says so
        assert c.alpha.value is None and (c.alpha.reason == NOT_COMPUTABLE_IDENTICAL or c.pairs == 0)
    assert c.bcubed_precision == c.bcubed_recall == c.bcubed_f1 == 1
    assert r.scus.identical == len(a.scus) and not r.scus.unmatched_a and not r.scus.unmatched_b
    assert r.weights.exact_share == 1 and r.weights.mean_abs_difference == 0


@hsettings(100)
@given(pyramid_pairs())
def test_f1_is_symmetric_and_precision_recall_swap(pair):
    a, b = pair
    ab, ba = compare(a, b).clustering, compare(b, a).clustering
    assert ab.pairwise_f1 == pytest.approx(ba.pairwise_f1)
    assert ab.bcubed_f1 == pytest.approx(ba.bcubed_f1)
    assert (ab.pairwise_precision, ab.pairwise_recall) == (ba.pairwise_recall, ba.pairwise_precision)
    assert ab.bcubed_precision == pytest.approx(ba.bcubed_recall)
    assert ab.alpha.value == pytest.approx(ba.alpha.value)


@hsettings(100)
@given(pyramid_pairs(), st.data())
def test_splitting_an_scu_lowers_recall_only(pair, data):
    a, _ = pair
    heavy = [s for s in a.scus if len(s.contributors) >= 2]
    if not heavy:
        return
    scu = data.draw(st.sampled_from(heavy))
    k = data.draw(st.integers(1, len(scu.contributors) - 1))
    new_uid = max(s.uid for s in a.scus) + 1
    scus = [s for s in a.scus if s is not scu] + [
        SpanSCU(scu.uid, scu.contributors[:k]),
        SpanSCU(new_uid, scu.contributors[k:]),
    ]
    split = SpanPyramid("split", a.references, tuple(scus))
    c = compare(a, split).clustering
    assert c.together_a - c.together_b == k * (len(scu.contributors) - k)  # the pairs across the cut
    assert c.pairwise_recall < 1 and c.bcubed_recall < 1
    assert c.bcubed_precision == 1
    # precision stays 1 (None, with its reason, when the split leaves no pair together in B)
    assert c.pairwise_precision == 1 if c.together_b else (c.pairwise_precision is None and "in B" in c.reason)
    # and the other way round (the split pyramid as the gold side) it is precision that drops
    back = compare(split, a).clustering
    assert back.pairwise_precision < 1 and back.bcubed_precision < 1 and back.bcubed_recall == 1


# --- real data: the PyrEval MATTER pyramids ---------------------------------------------------------

MATTER = (
    "12_10_09_MATTER.pyr",
    "Becky_MATTER.pyr",
    "Yinghui_12_10_09_MATTER.pyr",
    "IA/12_10_09_MATTER_fixed.pyr",
    "IA/Yinghui_12_10_09_MATTER_fixed.pyr",
)


@pytest.fixture(scope="module")
def matter():
    from annotation.formats.ducview import parse_pyramid
    from annotation.pyramids.agreement_inputs import span_pyramids

    folder = shared_data("pyreval-matter", "Scoring", "pyrs", "manual_pyramids")
    parsed = [(name, parse_pyramid((folder / name).read_bytes())[0]) for name in MATTER]
    return parsed, span_pyramids(parsed)


def _squeezed(text):
    return "".join(ch for ch in text if not ch.isspace() and ch != "'")


@pytest.mark.realdata
def test_matter_spans_land_on_the_same_words_of_the_first_pyramids_texts(matter):
    parsed, spans = matter
    canon = {r.id: r.text for r in parsed[0][1].references}
    for (name, p), sp in zip(parsed, spans, strict=True):
        assert sp.references == tuple(canon)
        assert [len(s.contributors) for s in sp.scus] == [len(s.contributors) for s in p.scus], name
        for scu, sscu in zip(p.scus, sp.scus, strict=True):
            for c, sc in zip(scu.contributors, sscu.contributors, strict=True):
                # the files differ only in whitespace and apostrophes: the words must be the same
                assert [_squeezed(p.reference(part.reference).text[part.start : part.end]) for part in c.parts] == [
                    _squeezed(canon[s.reference][s.start : s.end]) for s in sc.spans
                ], (name, scu.uid)


def _best_matching_total(weights):
    """Largest total weight of a one-to-one matching, by linear programming (the bipartite matching
    polytope is integral), not by the Hungarian method the module uses."""
    from scipy.optimize import linprog

    edges = [(i, j, w) for i, row in enumerate(weights) for j, w in enumerate(row) if w > 0]
    if not edges:
        return 0.0
    rows, cols = len(weights), len(weights[0])
    a_ub = np.zeros((rows + cols, len(edges)))
    for k, (i, j, _) in enumerate(edges):
        a_ub[i, k] = a_ub[rows + j, k] = 1
    res = linprog([-w for _, _, w in edges], A_ub=a_ub, b_ub=np.ones(rows + cols), bounds=(0, 1), method="highs")
    assert res.status == 0
    return -res.fun


@pytest.mark.realdata
def test_matter_pairwise_figures_match_an_independent_computation(matter):
    _, spans = matter
    by_name = {p.name: p for p in spans}
    results = pairwise(spans)
    assert len(results) == len(MATTER) * (len(MATTER) - 1) // 2
    for (na, nb), r in results.items():
        a, b = by_name[na], by_name[nb]
        ca, cb = contributors(a), contributors(b)
        sets_a, sets_b = [chars(c) for _, c in ca], [chars(c) for _, c in cb]
        overlap = [[2 * len(x & y) / (len(x) + len(y)) for y in sets_b] for x in sets_a]
        eligible = [[d if d >= 0.5 else 0.0 for d in row] for row in overlap]
        # the alignment is a one-to-one matching of eligible pairs with the largest total Dice
        index_a, index_b = {k: i for i, (k, _) in enumerate(ca)}, {k: j for j, (k, _) in enumerate(cb)}
        pairs = [(index_a[x.a], index_b[x.b]) for x in r.contributors.aligned]
        assert len({i for i, _ in pairs}) == len({j for _, j in pairs}) == len(pairs)
        assert [eligible[i][j] for i, j in pairs] == pytest.approx([x.dice for x in r.contributors.aligned])
        assert all(eligible[i][j] > 0 for i, j in pairs)
        assert sum(x.dice for x in r.contributors.aligned) == pytest.approx(_best_matching_total(eligible))
        assert r.contributors.mean_dice == pytest.approx(np.mean([overlap[i][j] for i, j in pairs]))
        assert r.contributors.exact == sum(sets_a[i] == sets_b[j] for i, j in pairs)
        assert len(r.contributors.unmatched_a) == len(ca) - len(pairs)
        assert len(r.contributors.unmatched_b) == len(cb) - len(pairs)
        assert_figures(r, a, b)
        # SCUs: the matching shares as many aligned contributors as the best one can
        ua, ub = [s.uid for s in a.scus], [s.uid for s in b.scus]
        shared = [[sum(1 for x in r.contributors.aligned if x.a[0] == s and x.b[0] == t) for t in ub] for s in ua]
        assert sum(m.shared for m in r.scus.matched) == pytest.approx(_best_matching_total(shared))
        assert len(r.scus.matched) + len(r.scus.unmatched_a) == len(ua)
        weight = {("a", s.uid): len(s.contributors) for s in a.scus} | {
            ("b", s.uid): len(s.contributors) for s in b.scus
        }
        wa = [weight["a", m.a] for m in r.scus.matched]
        wb = [weight["b", m.b] for m in r.scus.matched]
        assert r.weights.n == len(wa)
        assert r.weights.exact_share == pytest.approx(np.mean(np.array(wa) == np.array(wb)))
        assert r.weights.mean_abs_difference == pytest.approx(np.mean(np.abs(np.array(wa) - np.array(wb))))
        assert r.weights.pearson.value == pytest.approx(stats.pearsonr(wa, wb).statistic)
        assert r.weights.spearman.value == pytest.approx(stats.spearmanr(wa, wb).statistic)


def test_spans_of_another_copy_of_the_references_move_onto_the_first_pyramids_text():
    from annotation.formats import model
    from annotation.pyramids.agreement_inputs import span_pyramids

    canon = "Matter has mass. It's made of atoms and molecules."
    other = "Matter  has mass.\nIts made of atoms and  molecules."

    def file(ref_id, text, words):
        parts = [model.Part(ref_id, text.index(w), text.index(w) + len(w)) for w in words]
        scus = [
            model.SCU(i + 1, w, "", [model.Contributor(w, "", [p])])
            for i, (w, p) in enumerate(zip(words, parts, strict=True))
        ]
        return model.Pyramid([model.Reference(ref_id, ref_id, text)], scus, None)

    words = ["Matter  has", "mass.\nIts", "Its", "It", "made", "atoms and  molecules."]
    first, second = span_pyramids([("first", file("1", canon, ["mass."])), ("second", file("TC1", other, words))])
    assert first.references == second.references == ("1",)
    moved = [canon[c.spans[0].start : c.spans[0].end] for s in second.scus for c in s.contributors]
    # whitespace and the apostrophe inserted INSIDE a span join it; the one right after "It" does not
    assert moved == ["Matter has", "mass. It's", "It's", "It", "made", "atoms and molecules."]
    with pytest.raises(ValueError, match="not the first pyramid's"):
        span_pyramids([("first", file("1", canon, ["mass."])), ("x", file("1", "Something else entirely.", ["else"]))])
    with pytest.raises(ValueError, match="2 references"):
        two = file("1", canon, ["mass."])
        two.references.append(model.Reference("2", "2", canon))
        span_pyramids([("first", file("1", canon, ["mass."])), ("two", two)])


# --- numbering: figures are a function of content, not of uids or order -----------------------------


def test_the_same_characters_in_two_scus_go_with_the_scu_that_agrees():
    # A's R0 [0, 8) is a contributor of SCU 1 {R0, R1 [0, 8)} and of SCU 2 {R0, R1 [20, 28)}; B has
    # {R0, R1 [0, 8)} and {R1 [20, 28)}. B's R0 overlaps both copies alike (Dice 1). Aligned with
    # SCU 1's copy, B's first SCU is A's SCU 1 exactly (1 identical SCU, the one pair of items
    # together in both); with SCU 2's, no pair is together in both (precision and recall 0).
    # Whatever the uids, the first.
    def build(uid1, uid2):
        a = span_pyramid(
            "A",
            ["R0", "R1"],
            [(uid1, "", [[("R0", 0, 8)], [("R1", 0, 8)]]), (uid2, "", [[("R0", 0, 8)], [("R1", 20, 28)]])],
        )
        b = span_pyramid("B", ["R0", "R1"], [(7, "", [[("R0", 0, 8)], [("R1", 0, 8)]]), (8, "", [[("R1", 20, 28)]])])
        return compare(a, b)

    for uid1, uid2 in ((1, 2), (2, 1)):
        r = build(uid1, uid2)
        assert {(x.a, x.b) for x in r.contributors.aligned} == {
            ((uid1, 0), (7, 0)),
            ((uid1, 1), (7, 1)),
            ((uid2, 1), (8, 0)),
        }
        # the one pair together, in both
        assert (r.clustering.pairwise_precision, r.clustering.pairwise_recall) == (1, 1)
        assert r.scus.identical == 1 and r.contributors.unmatched_a == ((uid2, 0),)


def test_an_scu_sharing_one_contributor_with_each_of_two_goes_to_the_one_with_its_label():
    # A's X {R0, R1} shares one contributor with B's Y1 {R0} and one with Y2 {R1}: equally good
    # SCU matchings. The label decides (Y2 shares X's words), whatever the uids and order.
    for uids in ((1, 2), (2, 1)):
        a = span_pyramid("A", ["R0", "R1"], [(5, "volume and mass", [[("R0", 0, 8)], [("R1", 0, 8)]])])
        b = span_pyramid(
            "B", ["R0", "R1"], [(uids[0], "color", [[("R0", 0, 8)]]), (uids[1], "mass and volume", [[("R1", 0, 8)]])]
        )
        r = compare(a, b)
        assert [(m.a, m.b, m.shared) for m in r.scus.matched] == [(5, uids[1], 1)]
        assert r.scus.unmatched_b == (uids[0],)


@hsettings(60)
@given(tied_pairs(), PERMUTATIONS)
def test_renumbering_and_reordering_changes_no_figure(pair, rnd):
    """uids, SCU order, contributor order and part order of both pyramids permuted: every figure
    (and the alignment, named by content) is the same; and it is still the best alignment."""
    a, b = pair
    expected = compare(a, b)
    for _ in range(3):
        a2, b2 = renumbered(a, rnd), renumbered(b, rnd)
        assert content_figures(compare(a2, b2), a2, b2) == content_figures(expected, a, b)
    assert sum(x.dice for x in expected.contributors.aligned) == pytest.approx(
        _best_matching_total([[d if d >= 0.5 else 0.0 for d in row] for row in _dice_matrix(a, b)])
    )
    assert_figures(expected, a, b)


def _dice_matrix(a, b):
    return [[dice(x, y) for _, y in contributors(b)] for _, x in contributors(a)]


@hsettings(100)
@given(tied_pairs())
def test_ties_go_to_the_alignment_whose_scus_agree_most(pair):
    """Among the alignments with the largest total Dice, the one taken has the most eligible
    contributor pairs between the SCUs of its aligned contributors (every such alignment of a small
    case enumerated)."""
    a, b = pair
    ca, cb = contributors(a), contributors(b)
    eligible = {(i, j): dice(x, y) for i, (_, x) in enumerate(ca) for j, (_, y) in enumerate(cb) if dice(x, y) >= 0.5}
    if math.prod(1 + sum(1 for i2, _ in eligible if i2 == i) for i in range(len(ca))) > 20_000:
        return  # too many to enumerate (the tie block alone always is)
    affinity = itertools.groupby(sorted((ca[i][0][0], cb[j][0][0]) for i, j in eligible))
    affinity = {k: len(list(g)) for k, g in affinity}
    best = None
    for choice in itertools.product(*[[None] + [j for (i2, j) in eligible if i2 == i] for i in range(len(ca))]):
        used = [j for j in choice if j is not None]
        if len(used) != len(set(used)):
            continue
        pairs = [(i, j) for i, j in enumerate(choice) if j is not None]
        key = (round(sum(eligible[p] for p in pairs), 9), sum(affinity[ca[i][0][0], cb[j][0][0]] - 1 for i, j in pairs))
        best = key if best is None or key > best else best
    r = compare(a, b)
    index_a, index_b = {k: i for i, (k, _) in enumerate(ca)}, {k: j for j, (k, _) in enumerate(cb)}
    taken = [(index_a[x.a], index_b[x.b]) for x in r.contributors.aligned]
    assert (
        round(sum(eligible[p] for p in taken), 9),
        sum(affinity[ca[i][0][0], cb[j][0][0]] - 1 for i, j in taken),
    ) == best


MATTER_UIDS_SWAPPED = {106: 110, 110: 106}


@pytest.mark.realdata
def test_matter_figures_do_not_depend_on_uids_or_order(matter):
    _, spans = matter
    by_name = {p.name: p for p in spans}
    # the case of the issue: 12_10_09 with uids 106 and 110 swapped, the same content
    first = by_name[MATTER[0]]
    swapped = dataclasses.replace(
        first, scus=tuple(dataclasses.replace(s, uid=MATTER_UIDS_SWAPPED.get(s.uid, s.uid)) for s in first.scus)
    )
    becky = by_name["Becky_MATTER.pyr"]
    for p in (first, swapped):
        r = compare(p, becky)
        assert round(r.clustering.pairwise_f1, 3) == 0.909 and r.scus.identical == 25
    rnd = random.Random(31)
    for (na, nb), expected in pairwise(spans).items():
        a, b = by_name[na], by_name[nb]
        for _ in range(2):
            a2, b2 = renumbered(a, rnd), renumbered(b, rnd)
            assert content_figures(compare(a2, b2), a2, b2) == content_figures(expected, a, b), (na, nb)


def test_a_difference_of_exactly_the_noise_is_not_above_it_whatever_the_floats():
    # |0.56 - 0.50| and |0.36 - 0.30| are both 3/50; as floats the first is 0.06000000000000005
    assert abs(0.56 - 0.50) > 0.06 and not abs(0.36 - 0.30) > 0.06  # the trap a plain comparison falls in
    s = score_agreement({"p": 0.56, "q": 0.36, "r": 0.57, "t": 0.2}, {"p": 0.50, "q": 0.30, "r": 0.50, "t": 0.2})
    assert s.above_noise == 1  # r only: 0.07
    assert score_agreement({"p": 0.50}, {"p": 0.56}).above_noise == 0


def test_weights_per_aligned_contributor_need_no_scu_matching():
    # A: SCU 1 {R0, R1, R2} (weight 3); B: {R0, R1} (2) and {R2} (1). Items R0, R1, R2: weights
    # (3, 2), (3, 2), (3, 1) -> none equal, mean absolute difference (1 + 1 + 2) / 3.
    a = pyr("A", ["R0", "R1", "R2"], {1: [[(r, 0, 8)] for r in ("R0", "R1", "R2")]})
    b = pyr("B", ["R0", "R1", "R2"], {4: [[("R0", 0, 8)], [("R1", 0, 8)]], 5: [[("R2", 0, 8)]]})
    w = compare(a, b).contributor_weights
    assert (w.n, w.exact_share, w.mean_abs_difference) == (3, 0.0, pytest.approx(4 / 3))
    assert w.pearson.value is None  # A's weights are constant


def _figures_of_a_pair(r, swapped=False):
    """The figures of one comparison; ``swapped``: of the comparison with A and B exchanged, written
    as the other's (precision and recall exchanged, the rest the same)."""
    c, w = r.clustering, r.weights
    pr = [(c.pairwise_precision, c.pairwise_recall), (c.bcubed_precision, c.bcubed_recall)]
    if swapped:
        pr = [(y, x) for x, y in pr]
    return (
        len(r.contributors.aligned),
        c.pairs,
        c.together_both,
        pr,
        c.pairwise_f1,
        c.bcubed_f1,
        c.alpha.value,
        len(r.scus.matched),
        r.scus.identical,
        w.exact_share,
        w.mean_abs_difference,
        r.contributor_weights.exact_share,
        r.contributor_weights.mean_abs_difference,
    )


@pytest.mark.realdata
def test_matter_figures_do_not_depend_on_the_order_of_the_files(matter):
    """The files in the reverse order, renumbered: the texts are another file's copies (the spans
    move onto them), every pair is compared with A and B exchanged, and uids and the order of SCUs,
    contributors and parts are another: the same figures, precision and recall exchanged. (Not how many aligned
    contributors cover exactly the same characters: moved
    onto other copies of the texts, spans that differed by a space may coincide, or the reverse.)"""
    from annotation.pyramids.agreement_inputs import span_pyramids

    parsed, spans = matter
    rnd = random.Random(7)
    other = {p.name: renumbered(p, rnd) for p in span_pyramids(list(reversed(parsed)))}
    assert parsed[-1][1].references[0].text != parsed[0][1].references[0].text  # other copies of the texts
    for (na, nb), expected in pairwise(spans).items():
        assert _figures_of_a_pair(compare(other[nb], other[na]), swapped=True) == _figures_of_a_pair(expected), (na, nb)
