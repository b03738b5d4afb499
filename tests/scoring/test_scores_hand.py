"""Hand-computed pyramid scores (the arithmetic is in the comments)."""

from fractions import Fraction

import pytest

from scoring import (
    Convention,
    PeerAnnotation,
    Pyramid,
    compute_xa,
    reference_annotation,
    round_half_up,
    score_peer,
    score_reference,
    scu_vector,
)

NIST, SR = Convention.NIST, Convention.SACREROUGE

# Four references A-D. Weights (= contributors): 1:4, 2:3, 3:2, 4:2, 5:1, 6:1, 7:1.
# W_desc = [4, 3, 2, 2, 1, 1, 1]; sum = 14; Xa = 14/4 = 3.5 -> 4 (half up; ceiling also 4).
P = Pyramid.of("ABCD", {1: "ABCD", 2: "ABC", 3: "AB", 4: "CD", 5: "A", 6: "B", 7: "D"})
# Peer: SCU 1 once, SCU 3 twice (one repetition), SCU 5 once, one non-matching unit.
PEER = PeerAnnotation({1: 1, 3: 2, 5: 1}, non_matching=1)


def approx(x):
    return pytest.approx(x, abs=1e-12)


def test_small_pyramid_all_scores():
    s = score_peer(P, PEER)
    # D = w1 + w3 + w5 = 4 + 2 + 1 = 7 (the repetition of SCU 3 adds nothing)
    assert s.observed_weight == 7
    assert (s.matched_scus, s.repetitions, s.non_matching) == (3, 1, 1)
    # X = 3 + 1 + 1 = 5; MaxWeight(5) = 4 + 3 + 2 + 2 + 1 = 12
    assert s.size == 5 and s.max_weight_x == 12
    assert s.original == approx(7 / 12)
    # Xa = 4; MaxWeight(4) = 4 + 3 + 2 + 2 = 11
    assert s.average_scus == 3.5 and s.xa == 4 and s.max_weight_xa == 11
    assert s.modified == approx(7 / 11)
    assert s.recall == approx(3 / 7)  # 3 distinct SCUs of 7
    assert s.precision == approx(3 / 4)  # 3 / (3 + 1 non-matching)
    # harmonic mean: 2 (7/12)(7/11) / (7/12 + 7/11) = (98/132) / (161/132) = 14/23
    assert s.comprehensive == approx(14 / 23)
    assert s.undefined == {}
    assert s.n_references == 4 and s.n_scus == 7


def test_small_pyramid_jackknife_by_hand():
    s = score_peer(P, PEER)
    # Without A: weights 1:3 2:2 3:1 4:2 6:1 7:1 (5 vanishes) -> sum 10, Xa = 10/3 -> 3,
    #   MaxWeight(3) = 3+2+2 = 7; D = 3 + 1 = 4 -> 4/7
    # Without B: 1:3 2:2 3:1 4:2 5:1 7:1 -> sum 10, Xa 3, MW 7; D = 3+1+1 = 5 -> 5/7
    # Without C: 1:3 2:2 3:2 4:1 5:1 6:1 7:1 -> sum 11, 11/3 = 3.67 -> 4, MW = 3+2+2+1 = 8;
    #   D = 3+2+1 = 6 -> 6/8
    # Without D: 1:3 2:3 3:2 4:1 5:1 6:1 -> sum 11 -> 4, MW = 3+3+2+1 = 9; D = 6 -> 6/9
    expected = {"A": 4 / 7, "B": 5 / 7, "C": 6 / 8, "D": 6 / 9}
    assert dict(s.jackknife) == {k: approx(v) for k, v in expected.items()}
    # mean = (4/7 + 5/7 + 3/4 + 2/3) / 4 = 227/336
    assert s.modified_jk == approx(227 / 336)
    # SacreROUGE on a rule-abiding pyramid: same weights; here ceil gives the same Xa everywhere
    # (3.5 -> 4, 10/3 -> 4 instead of 3!): without A: MW(4) = 3+2+2+1 = 8 -> 4/8;
    # without B: D=5, MW(4)=8 -> 5/8; without C, D: as NIST (11/3 -> 4 both ways).
    sr = score_peer(P, PEER, SR)
    assert sr.modified == approx(7 / 11)
    assert sr.modified_jk == approx((4 / 8 + 5 / 8 + 6 / 8 + 6 / 9) / 4)


@pytest.mark.parametrize(
    "total, n, nist, sacrerouge",
    [
        (18, 4, 5, 5),  # 4.5  -> 5 half up (banker's round would give 4)
        (22, 4, 6, 6),  # 5.5  -> 6
        (449, 100, 4, 5),  # 4.49 -> 4 half up, 5 ceiling
        (17, 4, 4, 5),  # 4.25 -> 4, 5
        (10, 4, 3, 3),  # 2.5  -> 3 (banker's: 2)
        (16, 4, 4, 4),  # exactly 4
        (0, 4, 0, 0),
        (1, 5, 0, 1),  # 0.2
    ],
)
def test_xa_rounding(total, n, nist, sacrerouge):
    assert compute_xa(total, n, NIST) == nist
    assert compute_xa(total, n, SR) == sacrerouge


def test_round_half_up_is_not_bankers():
    assert [round_half_up(Fraction(k, 2)) for k in range(9)] == [0, 1, 1, 2, 2, 3, 3, 4, 4]
    assert round_half_up(Fraction(449, 100)) == 4
    assert round_half_up(Fraction(9, 2)) == 5 and round(4.5) == 4


def test_modified_uses_half_up_on_a_real_pyramid():
    # 4 references, weights 4,4,4,3,3 -> sum 18, Xa = 4.5 -> 5 (NIST) vs 5 (ceil); banker's 4.
    p = Pyramid.of("ABCD", {1: "ABCD", 2: "ABCD", 3: "ABCD", 4: "ABC", 5: "BCD"})
    s = score_peer(p, PeerAnnotation({1: 1, 4: 1}))
    # D = 4 + 3 = 7; MaxWeight(5) = 18 -> 7/18 (with Xa = 4 it would be 7/15)
    assert s.xa == 5 and s.modified == approx(7 / 18)
    # Add SCU 6 of weight 1: sum 19 -> 4.75 -> 5 both; add instead weights to reach 4.25:
    q = Pyramid.of("ABCD", {1: "ABCD", 2: "ABCD", 3: "ABCD", 4: "ABC", 5: "AB"})
    # sum = 4+4+4+3+2 = 17 -> 4.25: NIST Xa 4 (MW = 15), SacreROUGE Xa 5 (MW = 17); D = 4+3 = 7
    assert score_peer(q, PeerAnnotation({1: 1, 4: 1}), NIST).modified == approx(7 / 15)
    assert score_peer(q, PeerAnnotation({1: 1, 4: 1}), SR).modified == approx(7 / 17)


def test_repetitions_add_to_x_not_to_d():
    once = score_peer(P, PeerAnnotation({2: 1}))
    thrice = score_peer(P, PeerAnnotation({2: 3}))
    assert once.observed_weight == thrice.observed_weight == 3
    assert once.modified == thrice.modified == approx(3 / 11)
    # X = 1 -> MaxWeight(1) = 4 -> 3/4 ; X = 3 -> MaxWeight(3) = 9 -> 3/9
    assert (once.size, thrice.size) == (1, 3)
    assert once.original == approx(3 / 4) and thrice.original == approx(3 / 9)
    assert thrice.repetitions == 2 and thrice.matched_scus == 1
    # precision ignores repetitions: 1 / (1 + 0)
    assert thrice.precision == 1.0


def test_reference_is_scored_without_its_own_contributors():
    ann = reference_annotation(P, "A")
    assert dict(ann.matches) == {1: 1, 2: 1, 3: 1, 5: 1}
    s = score_reference(P, "A", ann)
    # Pyramid of B, C, D: weights 1:3 2:2 3:1 4:2 6:1 7:1 -> sum 10 / 3 -> Xa 3, MW(3) = 7.
    # SCU 5 (only A) vanishes and is dropped; D = 3 + 2 + 1 = 6.
    assert s.n_references == 3 and s.n_scus == 6
    assert s.dropped_matches == (5,)
    assert s.observed_weight == 6 and s.matched_scus == 3
    assert s.xa == 3 and s.max_weight_xa == 7
    assert s.modified == approx(6 / 7)
    assert s.original == approx(6 / 7)  # X = 3 as well
    assert s.recall == approx(3 / 6)
    # SacreROUGE's _jk for a reference is this very score (no further leave-one-out).
    assert s.modified_jk == s.modified
    assert s.jackknife == (("A", s.modified),)
    # As a peer against the full pyramid it would score higher (its own weights count):
    assert score_peer(P, ann).modified == approx((4 + 3 + 2 + 1) / 11)


def test_reference_scoring_sacrerouge_uses_ceiling():
    s = score_reference(P, "A", reference_annotation(P, "A", SR), SR)
    # same pyramid of B, C, D; Xa = ceil(10/3) = 4, MW(4) = 3+2+2+1 = 8; D = 6
    assert s.xa == 4 and s.modified == approx(6 / 8) and s.modified_jk == approx(6 / 8)


# Legacy SCUs, as in DUC 2006 D0631 SCU 237 and DUC 2007 D0701 SCU 36:
#   10: a contributor lying in A and B, plus C and D      NIST 3 | SacreROUGE: drop that contributor -> 2
#   11: two contributors from A, plus B                   NIST 3 | SacreROUGE: drop the SCU
#   12: only a contributor lying in A and B               NIST 1 | SacreROUGE: no contributor left -> drop
#   13: B, C                                              2 | 2
#   14: D                                                 1 | 1
LEGACY = Pyramid.of("ABCD", {10: [("A", "B"), "C", "D"], 11: ["A", "A", "B"], 12: [("A", "B")], 13: "BC", 14: "D"})


def test_legacy_weights_per_convention():
    w_nist = {s.uid: LEGACY.weight(s, NIST) for s in LEGACY.scus}
    w_sr = {s.uid: LEGACY.weight(s, SR) for s in LEGACY.scus}
    assert w_nist == {10: 3, 11: 3, 12: 1, 13: 2, 14: 1}
    assert w_sr == {10: 2, 11: 0, 12: 0, 13: 2, 14: 1}
    assert {s.uid for s in LEGACY.as_sacrerouge().scus} == {10, 13, 14}


def test_legacy_scores_per_convention():
    ann = PeerAnnotation({10: 1, 11: 1, 14: 1})
    nist = score_peer(LEGACY, ann, NIST)
    # NIST: sum = 3+3+1+2+1 = 10, 10/4 = 2.5 -> 3; W_desc [3,3,2,1,1] -> MW(3) = 8; D = 3+3+1 = 7
    assert nist.xa == 3 and nist.observed_weight == 7 and nist.modified == approx(7 / 8)
    assert nist.dropped_matches == ()
    sr = score_peer(LEGACY, ann, SR)
    # SacreROUGE: weights 10:2 13:2 14:1 -> sum 5, 5/4 = 1.25 -> ceil 2; MW(2) = 4;
    # the match of the dropped SCU 11 disappears: D = 2 + 1 = 3, matched 2
    assert sr.xa == 2 and sr.observed_weight == 3 and sr.modified == approx(3 / 4)
    assert sr.dropped_matches == (11,) and sr.matched_scus == 2 and sr.size == 2
    # SacreROUGE jackknife filters first, then removes a reference:
    #   without A: 10:[C,D] 13:[B,C] 14:[D] -> sum 5 / 3 -> 2, MW 4, D 3 -> 3/4
    #   without B: 10:[C,D] 13:[C] 14:[D] -> sum 4 / 3 -> 2, MW 3, D 3 -> 1
    #   without C: 10:[D] 13:[B] 14:[D] -> sum 3 / 3 -> 1, MW 1, D 2 -> 2 (above 1: reported)
    #   without D: 10:[C] 13:[B,C] -> sum 3 / 3 -> 1, MW 2, D 1 -> 1/2
    assert dict(sr.jackknife) == {"A": 0.75, "B": 1.0, "C": 2.0, "D": 0.5}
    assert sr.modified_jk == approx(4.25 / 4)


def test_without_reference_keeps_other_half_of_cross_reference_contributor():
    q = LEGACY.without_reference("A")
    assert q.references == ("B", "C", "D")
    w = {s.uid: q.weight(s, NIST) for s in q.scus}
    # 10: (A,B)->(B), C, D = 3; 11: A, A gone, B = 1; 12: (A,B) -> (B) = 1; 13: 2; 14: 1
    assert w == {10: 3, 11: 1, 12: 1, 13: 2, 14: 1}
    # Removing B as well leaves SCU 12 empty: it vanishes.
    assert {s.uid for s in q.without_reference("B").scus} == {10, 13, 14}
    with pytest.raises(ValueError):
        LEGACY.without_reference("Z")


def test_sacrerouge_reference_annotation_and_nist_repetition():
    # NIST: A has two contributors in SCU 11 -> found twice; (A,B) contributors count for A.
    assert dict(reference_annotation(LEGACY, "A").matches) == {10: 1, 11: 2, 12: 1}
    # SacreROUGE's get_annotation on the filtered pyramid: A contributes to nothing.
    assert dict(reference_annotation(LEGACY, "A", SR).matches) == {}
    assert dict(reference_annotation(LEGACY, "B", SR).matches) == {13: 1}


# ---- undefined cases: None with a reason, never 0 --------------------------------------------


def test_empty_pyramid_is_undefined_not_zero():
    s = score_peer(Pyramid(("A", "B"), ()), PeerAnnotation(non_matching=2))
    for name in ("original", "modified", "modified_jk", "recall", "comprehensive"):
        assert getattr(s, name) is None
        assert s.undefined[name]
    assert "empty pyramid" in s.undefined["modified"]
    assert s.precision == 0.0  # 0 matched of 2 units: defined, and truly 0
    assert s.xa == 0 and s.max_weight_xa == 0


def test_no_references():
    s = score_peer(Pyramid((), ()), PeerAnnotation())
    assert s.modified is None and "no reference" in s.undefined["modified"]
    assert s.average_scus is None and s.xa is None and "xa" in s.undefined
    assert s.modified_jk is None and "at least 2 references" in s.undefined["modified_jk"]


def test_empty_peer():
    s = score_peer(P, PeerAnnotation())
    assert s.original is None and "X = 0" in s.undefined["original"]
    assert s.precision is None and s.undefined["precision"]
    assert s.comprehensive is None and "original" in s.undefined["comprehensive"]
    # D = 0 over a positive MaxWeight(Xa): a true zero
    assert s.modified == 0.0 and s.recall == 0.0 and s.modified_jk == 0.0


def test_only_non_matching_content_scores_zero():
    s = score_peer(P, PeerAnnotation(non_matching=3))
    assert s.original == 0.0 and s.modified == 0.0 and s.precision == 0.0
    assert s.comprehensive == 0.0 and s.undefined == {}


def test_xa_zero_is_undefined_in_nist_but_not_in_sacrerouge():
    p = Pyramid.of("ABCDE", {1: "A"})  # 1/5 = 0.2 -> 0 half up, 1 ceiling
    nist = score_peer(p, PeerAnnotation({1: 1}))
    assert nist.modified is None and "Xa is 0" in nist.undefined["modified"]
    assert score_peer(p, PeerAnnotation({1: 1}), SR).modified == 1.0


def test_single_reference_has_no_jackknife():
    p = Pyramid.of("A", {1: "A", 2: "A"})
    s = score_peer(p, PeerAnnotation({1: 1}))
    assert s.modified == 0.5 and s.modified_jk is None
    assert "n = 1" in s.undefined["modified_jk"]


def test_jackknife_undefined_when_a_leave_one_out_pyramid_is_empty():
    p = Pyramid.of("AB", {1: "A"})  # without A the pyramid is empty
    s = score_peer(p, PeerAnnotation({1: 1}))
    assert s.modified == 1.0  # 1/2 = 0.5 -> Xa 1, MW 1, D 1
    assert s.modified_jk is None and "'A'" in s.undefined["modified_jk"]


def test_reference_of_a_single_reference_pyramid():
    p = Pyramid.of("A", {1: "A"})
    s = score_reference(p, "A", reference_annotation(p, "A"))
    assert s.n_references == 0 and s.modified is None and s.modified_jk is None
    assert s.undefined["modified_jk"] == s.undefined["modified"]
    assert s.dropped_matches == (1,)


def test_unknown_uid_and_reference_are_errors():
    with pytest.raises(ValueError, match="999"):
        score_peer(P, PeerAnnotation({999: 1}))
    with pytest.raises(ValueError):
        score_reference(P, "Z", PeerAnnotation())
    with pytest.raises(ValueError):
        scu_vector(P, PeerAnnotation({999: 1}))


def test_model_validation():
    with pytest.raises(ValueError):
        PeerAnnotation({1: 0})
    with pytest.raises(ValueError):
        PeerAnnotation({}, non_matching=-1)
    with pytest.raises(ValueError):
        Pyramid.of("AB", {1: "C"})
    with pytest.raises(ValueError):
        Pyramid.of("AA", {})
    with pytest.raises(ValueError):
        Pyramid.of("AB", {1: []}).without_reference("C")


def test_scu_vector_is_in_uid_order():
    p = Pyramid.of("AB", {30: "A", 4: "AB", 17: "B"})
    assert scu_vector(p, PeerAnnotation({17: 2, 30: 1})) == (0, 1, 1)


def test_as_dict_is_json_ready():
    import json

    d = score_peer(LEGACY, PeerAnnotation({11: 1}), SR).as_dict()
    json.dumps(d)
    assert d["convention"] == "sacrerouge" and d["dropped_matches"] == [11]
    assert d["jackknife"][0][0] == "A" and "precision" in d["undefined"]
