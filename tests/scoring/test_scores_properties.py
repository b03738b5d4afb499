"""Properties of the scores on random pyramids, and independent oracles for both conventions."""

import math
from decimal import ROUND_HALF_UP, Decimal

import pytest
from hypothesis import assume, given, note
from hypothesis import strategies as st

from scoring import Convention, PeerAnnotation, score_peer, score_reference
from scoring.scores import SCORE_NAMES

from tests.scoring._strategies import annotations, hsettings, pyramid_and_annotation, pyramids, restrict

NIST, SR = Convention.NIST, Convention.SACREROUGE
# A test per convention: for the properties whose examples are filtered by the convention's own scores
# (``assume`` on its xa or weights), so each convention keeps its count of examples that qualify.
BOTH = pytest.mark.parametrize("convention", [NIST, SR])


def conventions():
    """Both conventions, one after the other, on one generated example: for the properties whose
    examples do not depend on the convention. Generating an example is most of a property's cost
    (hypothesis's draws: 85% of a test's CPU; the scores themselves microseconds), so each example is
    checked under both instead of a test per convention generating its own: each convention is
    checked on as many examples as before, and a failure says which one failed (hypothesis's note)."""
    for convention in (NIST, SR):
        note(f"convention: {convention.value}")
        yield convention


# ---- oracles, written independently of scoring.scores ----------------------------------------


def nist_oracle(pyramid, annotation):
    """Modified score as DUCView/NIST: weight = contributors, Xa half up via Decimal."""
    weight = {s.uid: len(s.contributors) for s in pyramid.scus if s.contributors}
    d = sum(weight[u] for u in annotation.matches if u in weight)
    xa = int(
        (Decimal(sum(weight.values())) / Decimal(len(pyramid.references))).quantize(Decimal(1), rounding=ROUND_HALF_UP)
    )
    ideal = sum(sorted(weight.values(), reverse=True)[:xa])
    return d / ideal


def _sacrerouge_load(pyramid):
    """SacreROUGE's reader semantics: (uid, [summary index per kept contributor])."""
    index = {r: i for i, r in enumerate(pyramid.references)}
    loaded = []
    for scu in pyramid.scus:
        indices = []
        for c in scu.contributors:
            where = {index[r] for r in c.references}
            if len(where) > 1:  # contributor from several summaries: skipped
                continue
            indices.append(where.pop())
        if not indices:  # nothing left: SCU skipped
            continue
        if len(indices) != len(set(indices)):  # two contributors, same summary: SCU skipped
            continue
        loaded.append((scu.uid, indices))
    return loaded


def _remove_summary(loaded, i):
    out = []
    for uid, indices in loaded:
        kept = [j - 1 if j > i else j for j in indices if j != i]
        if kept:
            out.append((uid, kept))
    return out


def _sacrerouge_score(loaded, n, uids):
    weight = {uid: len(set(ind)) for uid, ind in loaded}
    total = sum(weight[u] for u in uids if u in weight)
    scus_per_summary = [len({uid for uid, ind in loaded if s in ind}) for s in range(n)]
    remaining = math.ceil(sum(scus_per_summary) / n)
    ideal = 0
    for w in sorted(weight.values(), reverse=True):
        if remaining <= 0:
            break
        ideal += w
        remaining -= 1
    return total / ideal  # ZeroDivisionError like SacreROUGE


def sacrerouge_oracle(pyramid, annotation):
    """(modified, modified_jk) of a peer, following SacreROUGE's semantics step by step."""
    loaded = _sacrerouge_load(pyramid)
    known = {uid for uid, _ in loaded}
    uids = [u for u in annotation.matches if u in known]  # the annotation reader drops the rest
    n = len(pyramid.references)
    plain = _sacrerouge_score(loaded, n, uids)
    if n == 1:
        return plain, None
    jk = [_sacrerouge_score(_remove_summary(loaded, i), n - 1, uids) for i in range(n)]
    return plain, sum(jk) / len(jk)


def sacrerouge_reference_oracle(pyramid, ref):
    loaded = _sacrerouge_load(pyramid)
    i = pyramid.references.index(ref)
    uids = [uid for uid, ind in loaded if i in ind]  # Pyramid.get_annotation(i)
    return _sacrerouge_score(_remove_summary(loaded, i), len(pyramid.references) - 1, uids)


# ---- oracle agreement --------------------------------------------------------------------


@hsettings(300)
@given(pyramid_and_annotation(legacy=True))
def test_nist_matches_oracle(pa):
    p, a = pa
    s = score_peer(p, a, NIST)
    try:
        expected = nist_oracle(p, a)
    except ZeroDivisionError:
        assert s.modified is None and s.undefined["modified"]
        return
    assert s.modified == pytest.approx(expected, abs=1e-12)


@hsettings(300)
@given(pyramid_and_annotation(legacy=True))
def test_sacrerouge_matches_oracle(pa):
    p, a = pa
    s = score_peer(p, a, SR)
    try:
        plain, jk = sacrerouge_oracle(p, a)
    except ZeroDivisionError:
        assert s.modified is None or s.modified_jk is None
        return
    assert s.modified == pytest.approx(plain, abs=1e-12)
    if jk is None:
        assert s.modified_jk is None and s.undefined["modified_jk"]
    else:
        assert s.modified_jk == pytest.approx(jk, abs=1e-12)


@hsettings(300)
@given(pyramids(min_refs=2, legacy=True), st.data())
def test_sacrerouge_reference_matches_oracle(p, data):
    from scoring import reference_annotation

    ref = data.draw(st.sampled_from(p.references))
    s = score_reference(p, ref, reference_annotation(p, ref, SR), SR)
    try:
        expected = sacrerouge_reference_oracle(p, ref)
    except ZeroDivisionError:
        assert s.modified is None and s.modified_jk is None
        return
    assert s.modified == pytest.approx(expected, abs=1e-12)
    assert s.modified_jk == s.modified


# ---- properties --------------------------------------------------------------------------


@hsettings()
@given(pa=pyramid_and_annotation(legacy=True), data=st.data())
def test_adding_a_matched_scu_never_lowers_d(pa, data):
    p, a = pa
    missing = [s.uid for s in p.scus if s.uid not in a.matches]
    assume(missing)
    uid = data.draw(st.sampled_from(missing))
    more = PeerAnnotation({**a.matches, uid: 1}, a.non_matching)
    for convention in conventions():
        before, after = score_peer(p, a, convention), score_peer(p, more, convention)
        assert after.observed_weight >= before.observed_weight
        if before.modified is not None:
            assert after.modified >= before.modified
        assert after.matched_scus >= before.matched_scus


@BOTH
@hsettings()
@given(p=pyramids(legacy=True), non_matching=st.integers(0, 3))
def test_top_xa_scus_score_modified_one(convention, p, non_matching):
    weights = p.weights(convention)
    assume(weights)
    probe = score_peer(p, PeerAnnotation(), convention)
    assume(probe.xa)
    top = sorted(weights, key=lambda u: -weights[u])[: probe.xa]
    s = score_peer(p, PeerAnnotation({u: 1 for u in top}, non_matching), convention)
    assert s.modified == pytest.approx(1.0, abs=1e-12)


@BOTH
@hsettings()
@given(pa=pyramid_and_annotation(legacy=True))
def test_scores_in_unit_interval_when_peer_has_at_most_xa_scus(convention, pa):
    p, a = pa
    s = score_peer(p, a, convention)
    assume(s.xa is not None and s.matched_scus <= s.xa)
    for name in ("original", "modified", "recall", "precision", "comprehensive"):
        v = getattr(s, name)
        assert v is None or 0.0 <= v <= 1.0 + 1e-12, name


@hsettings()
@given(pa=pyramid_and_annotation(legacy=True))
def test_general_bounds_and_harmonic_mean(pa):
    p, a = pa
    for convention in conventions():
        s = score_peer(p, a, convention)
        assert s.size == s.matched_scus + s.repetitions + s.non_matching
        if s.original is not None:
            assert 0.0 <= s.original <= 1.0 + 1e-12  # D <= MaxWeight(matched) <= MaxWeight(X)
        if s.comprehensive is not None:
            lo, hi = sorted([s.original, s.modified])
            assert lo - 1e-12 <= s.comprehensive <= hi + 1e-12


@hsettings()
@given(pa=pyramid_and_annotation(legacy=True))
def test_every_none_has_a_reason_and_every_reason_a_none(pa):
    p, a = pa
    for convention in conventions():
        s = score_peer(p, a, convention)
        d = s.as_dict()
        nones = {k for k, v in d.items() if v is None}
        assert nones == set(s.undefined)
        assert all(isinstance(r, str) and r for r in s.undefined.values())
        assert set(SCORE_NAMES) <= set(d)


@hsettings()
@given(pa=pyramid_and_annotation(min_refs=2, legacy=True))
def test_jackknife_is_mean_of_explicit_leave_one_out(pa):
    p, a = pa
    for convention in conventions():
        s = score_peer(p, a, convention)
        base = p.as_sacrerouge() if convention is SR else p
        loo = []
        for ref in p.references:
            reduced = base.without_reference(ref)
            loo.append(score_peer(reduced, restrict(a, reduced), convention).modified)
        assert [r for r, _ in s.jackknife] == list(p.references)
        if None in loo:
            assert s.modified_jk is None and s.undefined["modified_jk"]
        else:
            assert [v for _, v in s.jackknife] == pytest.approx(loo, abs=1e-12)
            assert s.modified_jk == pytest.approx(sum(loo) / len(loo), abs=1e-12)


@hsettings()
@given(p=pyramids(min_refs=2, legacy=True), data=st.data())
def test_reference_score_is_peer_score_against_other_references(p, data):
    ref = data.draw(st.sampled_from(p.references))
    a = data.draw(annotations(p))
    for convention in conventions():
        s = score_reference(p, ref, a, convention)
        base = p.as_sacrerouge() if convention is SR else p
        reduced = base.without_reference(ref)
        plain = score_peer(reduced, restrict(a, reduced), convention)
        for name in (
            "observed_weight",
            "matched_scus",
            "size",
            "xa",
            "n_references",
            "original",
            "modified",
            "recall",
            "precision",
            "comprehensive",
        ):
            assert getattr(s, name) == getattr(plain, name), name
        assert s.modified_jk == s.modified
        assert ref not in reduced.references and len(reduced.references) == len(p.references) - 1


@hsettings()
@given(pa=pyramid_and_annotation(legacy=False))
def test_conventions_agree_on_rule_abiding_pyramids_when_xa_agrees(pa):
    p, a = pa
    nist, sr = score_peer(p, a, NIST), score_peer(p, a, SR)
    assert nist.observed_weight == sr.observed_weight and nist.recall == sr.recall
    if nist.xa == sr.xa:
        assert nist.modified == sr.modified
    else:
        assert sr.xa == nist.xa + 1  # ceiling exceeds half-up by at most one


@hsettings(400)
@given(p=pyramids(min_refs=1, legacy=True), empty=st.lists(st.integers(501, 600), unique=True, max_size=2))
def test_prepared_jackknife_weights_are_those_of_the_pyramids_without_each_reference(p, empty):
    """``prepare`` derives the n jackknife weights from the pyramid's own instead of building the n
    pyramids (the cost of rescoring after an edit): exactly the weights of the built pyramids, SCUs
    without contributors (a new SCU) and the legacy ones (cross-reference, duplicated) included."""
    from scoring.model import SCU, Pyramid
    from scoring.scores import Weights, prepare

    p = Pyramid(p.references, p.scus + tuple(SCU(uid, ()) for uid in empty))
    for convention in conventions():
        prepared = prepare(p, convention)
        base = p.as_sacrerouge() if convention is SR else p
        expected = (
            tuple((ref, Weights.of(base.without_reference(ref), convention)) for ref in base.references)
            if p.n >= 2
            else ()
        )
        assert prepared.jackknife == expected
        assert prepared.base == Weights.of(base, convention)
