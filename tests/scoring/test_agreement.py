"""alpha_Dice: hand examples, and equality with NLTK and the krippendorff package."""

import warnings

import krippendorff
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from nltk.metrics.agreement import AnnotationTask

from scoring import alpha_dice, alpha_dice_summary, dice_distance, peer_matrix
from scoring.agreement import NOT_COMPUTABLE_IDENTICAL, TOO_FEW_VALUES

from tests.scoring._strategies import hsettings


def nltk_dice(a, b):
    return 0.0 if a + b == 0 else 1.0 - 2.0 * min(a, b) / (a + b)


def kripp_dice(v1, v2, i1=None, i2=None, n_v=None, dtype=np.float64):
    """krippendorff 0.9 calls this with whole arrays (a column and a row of the value domain)."""
    v1 = np.asarray(v1, dtype=dtype)
    v2 = np.asarray(v2, dtype=dtype)
    s = v1 + v2
    with np.errstate(invalid="ignore", divide="ignore"):
        d = 1.0 - 2.0 * np.minimum(v1, v2) / s
    return np.where(s == 0, 0.0, d).astype(dtype)


def nltk_alpha(matrix):
    data = [(str(c), str(u), v) for c, row in matrix.items() for u, v in row.items() if v is not None]
    return AnnotationTask(data=data, distance=nltk_dice).alpha()


def kripp_alpha(matrix):
    coders = list(matrix)
    units = sorted({u for row in matrix.values() for u in row}, key=repr)
    data = [[np.nan if matrix[c].get(u) is None else matrix[c][u] for u in units] for c in coders]
    return krippendorff.alpha(reliability_data=np.array(data, dtype=float), level_of_measurement=kripp_dice)


def test_dice_distance_hand_values():
    assert dice_distance(2, 3) == pytest.approx(0.2)  # Dice = 2*2/5 = 0.8
    assert dice_distance(0, 0) == 0.0
    assert dice_distance(0, 4) == 1.0  # found vs not found
    assert dice_distance(3, 3) == 0.0
    assert dice_distance(1, 2) == pytest.approx(1 / 3)  # 1 - 2/3
    assert dice_distance(5, 1) == dice_distance(1, 5)
    with pytest.raises(ValueError):
        dice_distance(-1, 2)


def test_alpha_hand_example():
    # Two coders, four SCUs: (1,1) (0,0) (2,3) (1,0).
    # Coincidences (each unit has m = 2, weight 1/(m-1) = 1 per ordered pair):
    #   o(1,1)=2 o(0,0)=2 o(2,3)=o(3,2)=1 o(1,0)=o(0,1)=1 -> n_0=3 n_1=3 n_2=1 n_3=1, n=8
    # sum o*delta = 2*0.2 + 2*1 = 2.4
    # sum_{c!=k} n_c n_k delta = 2*(0-1: 9*1 + 0-2: 3*1 + 0-3: 3*1 + 1-2: 3*(1/3) + 1-3: 3*(1/2)
    #                              + 2-3: 1*0.2) = 2*17.7 = 35.4
    # alpha = 1 - (n-1) * 2.4 / 35.4 = 1 - 16.8/35.4 = 18.6/35.4 = 31/59
    m = {"x": {1: 1, 2: 0, 3: 2, 4: 1}, "y": {1: 1, 2: 0, 3: 3, 4: 0}}
    a = alpha_dice(m)
    assert a.value == pytest.approx(31 / 59, abs=1e-12)
    assert (a.units, a.values, a.coders) == (4, 8, 2)
    assert a.observed_disagreement == pytest.approx(2.4 / 8)
    assert a.expected_disagreement == pytest.approx(35.4 / 56)
    assert nltk_alpha(m) == pytest.approx(31 / 59, abs=1e-12)


def test_dice_differs_from_nominal_on_repetitions():
    # 2 vs 3 is a partial disagreement under Dice, a full one under a nominal distance.
    m = {"x": {1: 2, 2: 0, 3: 1}, "y": {1: 3, 2: 0, 3: 1}}
    nominal = AnnotationTask(data=[(c, str(u), v) for c, r in m.items() for u, v in r.items()]).alpha()
    assert alpha_dice(m).value > nominal


def test_perfect_agreement_is_exactly_one():
    m = {"x": {1: 0, 2: 1, 3: 2}, "y": {1: 0, 2: 1, 3: 2}, "z": {1: 0, 2: 1}}
    assert alpha_dice(m).value == 1.0


def test_identical_values_not_computable():
    a = alpha_dice({"x": {1: 1, 2: 1}, "y": {1: 1, 2: 1}})
    assert a.value is None and a.reason == NOT_COMPUTABLE_IDENTICAL
    assert a.units == 2 and a.values == 4
    # Only the pairable values count: the lone 5 of unit 3 is not pairable.
    a = alpha_dice({"x": {1: 0, 2: 0, 3: 5}, "y": {1: 0, 2: 0}})
    assert a.value is None and a.reason == NOT_COMPUTABLE_IDENTICAL


def test_too_few_values():
    assert alpha_dice({}).reason == TOO_FEW_VALUES
    a = alpha_dice({"x": {1: 1, 2: 0}, "y": {3: 1}})  # no unit has two values
    assert a.value is None and a.reason == TOO_FEW_VALUES and a.units == 0
    a = alpha_dice({"x": {1: 1}, "y": {1: None}})
    assert a.value is None and a.reason == TOO_FEW_VALUES


def test_missing_values_as_none_or_absent_are_the_same():
    a = alpha_dice({"x": {1: 1, 2: 0, 3: 2}, "y": {1: 1, 2: 1, 3: None}, "z": {1: 0, 3: 2}})
    b = alpha_dice({"x": {1: 1, 2: 0, 3: 2}, "y": {1: 1, 2: 1}, "z": {1: 0, 3: 2}})
    assert a == b


matrices = (
    st.integers(2, 4)
    .flatmap(
        lambda coders: st.integers(1, 15).flatmap(
            lambda units: st.lists(
                st.lists(st.one_of(st.none(), st.integers(0, 3)), min_size=units, max_size=units),
                min_size=coders,
                max_size=coders,
            )
        )
    )
    .map(lambda rows: {f"c{i}": {u: v for u, v in enumerate(row)} for i, row in enumerate(rows)})
)


def _pairable_values(matrix):
    units = {}
    for row in matrix.values():
        for u, v in row.items():
            if v is not None:
                units.setdefault(u, []).append(v)
    return [v for vs in units.values() if len(vs) >= 2 for v in vs]


@hsettings(400)
@given(matrices)
def test_equals_nltk_and_krippendorff(matrix):
    ours = alpha_dice(matrix)
    values = _pairable_values(matrix)
    if len(values) < 2:
        assert ours.value is None and ours.reason == TOO_FEW_VALUES
        return
    if len(set(values)) == 1:
        assert ours.value is None and ours.reason == NOT_COMPUTABLE_IDENTICAL
        assert nltk_alpha(matrix) == 1  # NLTK's convention, which we refuse to show
        return
    assert ours.values == len(values)
    assert ours.value == pytest.approx(nltk_alpha(matrix), abs=1e-9)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert ours.value == pytest.approx(float(kripp_alpha(matrix)), abs=1e-9)


def test_peer_matrix_fills_zeros_for_every_scu():
    m = peer_matrix([5, 7, 9], {"114": {5: 2}, "115": {5: 1, 9: 1}})
    # SCU 7, found by nobody, is still a unit (it is agreement: both said "absent").
    assert m == {"114": {5: 2, 7: 0, 9: 0}, "115": {5: 1, 7: 0, 9: 1}}
    with pytest.raises(ValueError):
        peer_matrix([5], {"114": {6: 1}})


def test_summary_mean_and_pooled():
    uids = [1, 2, 3, 4]
    p1 = peer_matrix(uids, {"a": {1: 1, 3: 2, 4: 1}, "b": {1: 1, 3: 3}})
    p2 = peer_matrix(uids, {"a": {1: 1}, "b": {1: 1}})  # 1,0,0,0 both: perfect, computable
    p3 = peer_matrix(uids, {"a": {}, "b": {}})  # all zeros: not computable
    p4 = peer_matrix(uids, {"a": {2: 1}})  # one coder: not pairable
    s = alpha_dice_summary({"p1": p1, "p2": p2, "p3": p3, "p4": p4})
    assert s.by_peer["p1"].value == pytest.approx(alpha_dice(p1).value)
    assert s.by_peer["p2"].value == 1.0
    assert s.not_computable == ("p3", "p4")
    assert s.peers_in_mean == 2 and s.units_in_mean == 8
    assert s.mean == pytest.approx((alpha_dice(p1).value + 1.0) / 2)
    pooled = {c: {} for c in ("a", "b")}
    for peer, m in {"p1": p1, "p2": p2, "p3": p3, "p4": p4}.items():
        for c, row in m.items():
            for u, v in row.items():
                pooled[c][(peer, u)] = v
    assert s.pooled == alpha_dice(pooled)
    assert s.pooled.units == 12  # p4's units have a single value
    assert s.pooled.value == pytest.approx(nltk_alpha(pooled), abs=1e-9)
    d = s.as_dict()
    assert d["not_computable"] == ["p3", "p4"] and d["pooled"]["units"] == 12


def test_summary_without_computable_peers():
    s = alpha_dice_summary({"p": {"a": {1: 0}, "b": {1: 0}}})
    assert s.mean is None and s.mean_reason and s.peers_in_mean == 0
    assert s.pooled.value is None
