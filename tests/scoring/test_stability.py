"""Stability curves against direct computations written here: k-reference pyramids built by hand
from the SCUs' references (not with ``without_reference``) and scored with ``score_peer``; the
documented drawing protocol replayed with scipy's Kendall tau."""

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from scoring.model import PeerAnnotation, Pyramid
from scoring.scores import score_peer
from scoring.stability import TopicAnnotations, reference_stability, topic_stability


def test_topic_curve_is_one_when_every_topic_ranks_alike():
    data = {s: {f"t{i}": q + 0.01 * i for i in range(6)} for s, q in {"a": 0.1, "b": 0.2, "c": 0.3, "d": 0.4}.items()}
    curve = topic_stability(data, draws=30)
    assert [p.k for p in curve] == [1, 2, 3, 4, 5]
    assert all(p.mean == 1.0 and p.low == 1.0 and p.draws == 30 for p in curve)


def test_topic_curve_replays_the_documented_draws():
    rng = np.random.default_rng(1)
    systems, topics = [f"s{i}" for i in range(7)], [f"t{j}" for j in range(9)]
    scores = rng.random((7, 9)) + np.linspace(0, 0.6, 7)[:, None]
    data = {s: {t: scores[i, j] for j, t in enumerate(topics)} for i, s in enumerate(systems)}
    curve = topic_stability(data, sizes=[2, 5], draws=40, seed=8)
    replay = np.random.default_rng(8)
    full = scores.mean(axis=1)
    for point in curve:
        chosen = np.argsort(replay.random((40, 9)), axis=1)[:, : point.k]
        taus = [stats.kendalltau(full, scores[:, c].mean(axis=1)).statistic for c in chosen]
        assert point.mean == pytest.approx(np.mean(taus), abs=1e-12)
        assert point.sd == pytest.approx(np.std(taus, ddof=1), abs=1e-12)
        assert (point.low, point.high) == pytest.approx(tuple(np.quantile(taus, [0.05, 0.95])), abs=1e-12)
    assert curve[0].mean < curve[1].mean  # more topics, closer to the full ranking


# Three references A, B, C; SCU uid -> the references expressing it.
SCUS = {1: "ABC", 2: "AB", 3: "BC", 4: "A", 5: "B", 6: "C", 7: "AC"}
PEERS = {"p1": [1, 2, 4], "p2": [1, 3, 6], "p3": [5, 6], "p4": [1, 2, 3, 7], "p5": [4]}


def _topic(shift):
    pyramid = Pyramid.of("ABC", {uid: list(refs) for uid, refs in SCUS.items()})
    return TopicAnnotations(
        pyramid,
        [(s, PeerAnnotation.of(uids[shift % len(uids) :] + uids[: shift % len(uids)])) for s, uids in PEERS.items()],
    )


def _hand_score(keep, uids):
    """Modified score against the pyramid of the kept references, built from the SCU table."""
    scus = {uid: [r for r in refs if r in keep] for uid, refs in SCUS.items()}
    pyramid = Pyramid.of(keep, {uid: refs for uid, refs in scus.items() if refs})
    found = [u for u in uids if u in pyramid_uids(pyramid)]
    return score_peer(pyramid, PeerAnnotation.of(found)).modified


def pyramid_uids(pyramid):
    return {s.uid for s in pyramid.scus}


def test_reference_curve_replays_every_subset_of_a_hand_made_pyramid():
    topics = {"T1": _topic(0), "T2": _topic(1)}
    curve = reference_stability(topics, draws=25, seed=3)
    assert [p.k for p in curve] == [1, 2] and [p.subsets for p in curve] == [3, 3]
    systems = sorted(PEERS)
    full = [np.mean([_hand_score("ABC", PEERS[s]) for _ in topics]) for s in systems]
    replay = np.random.default_rng(3)
    for point in curve:
        subsets = list(itertools.combinations("ABC", point.k))
        per_topic = {
            t: np.array([[_hand_score("".join(keep), PEERS[s]) for s in systems] for keep in subsets]) for t in topics
        }
        picks = {t: replay.integers(0, len(subsets), 25) for t in sorted(topics)}
        taus = []
        for d in range(25):
            means = np.mean([per_topic[t][picks[t][d]] for t in sorted(topics)], axis=0)
            tau = stats.kendalltau(full, means).statistic
            if not math.isnan(tau):
                taus.append(tau)
        assert point.draws == len(taus)
        assert point.mean == pytest.approx(np.mean(taus), abs=1e-12)


def test_reference_curve_samples_subsets_when_there_are_many():
    refs = "ABCDEFGH"
    pyramid = Pyramid.of(refs, {i: [refs[i % 8], refs[(i + 1) % 8]] for i in range(16)})
    topic = TopicAnnotations(pyramid, [(f"s{j}", PeerAnnotation.of(list(range(j, 16, 3)))) for j in range(4)])
    curve = reference_stability({"T": topic}, draws=10, max_subsets=5)
    assert [p.k for p in curve] == list(range(1, 8))
    assert [p.subsets for p in curve] == [5, 5, 5, 5, 5, 5, 5]  # C(8, k) > 5 for every k < 8: a seeded sample
    assert reference_stability({"T": topic}, draws=10, max_subsets=5) == curve


def _sampled_topic(peers):
    """Eight references (C(8, k) > 5 subsets for every k: drawn from the curve's generator) and one
    legacy cross-reference contributor, which SacreROUGE's reading drops (the conventions differ)."""
    refs = "ABCDEFGH"
    scus = {i: [refs[i % 8], refs[(i + 1) % 8]] for i in range(16)} | {16: [("A", "C")]}
    return TopicAnnotations(Pyramid.of(refs, scus), [(f"p{j}", PeerAnnotation.of(uids)) for j, uids in peers])


def test_reference_curve_with_a_memo_scores_only_changed_topics_and_draws_the_same_curve(monkeypatch):
    """The dashboard keeps each topic's subset scores between snapshots: a topic whose data did not
    change is not scored again, one whose data changed is, each convention apart, and the curve
    (subsets drawn from the one generator, in topic order, whatever the memo holds) is the same."""
    import scoring.stability as stability_module

    scored = []
    real = stability_module.modified_against

    def counting(pyramid, annotations, convention):
        scored.append(pyramid.references)
        return real(pyramid, annotations, convention)

    monkeypatch.setattr(stability_module, "modified_against", counting)
    topics = {
        "T1": _topic(0),
        "T2": _topic(1),
        "T3": _sampled_topic([(0, [0, 1, 16]), (1, [2, 3, 4]), (2, [16, 5]), (3, [7, 8, 9, 10])]),
    }
    memo = {}

    def curves(topics, convention):
        with_memo = reference_stability(topics, convention, draws=25, max_subsets=5, seed=3, memo=memo)
        calls = len(scored)
        without = reference_stability(topics, convention, draws=25, max_subsets=5, seed=3)
        del scored[calls:]
        return with_memo, without

    for convention in ("nist", "sacrerouge"):
        scored.clear()
        with_memo, without = curves(topics, convention)
        assert with_memo == without
        # Every subset of every topic's data once (a new convention): T1 and T2 hold the same data (the
        # rotation of the found uids changes no count), scored once.
        assert len(scored) == (1 + 3 + 3) + (1 + 7 * 5)
        scored.clear()
        again, _ = curves(topics, convention)
        assert again == without and scored == []  # nothing changed: nothing scored

    changed = {**topics, "T3": _sampled_topic([(0, [0, 1, 16]), (1, [2, 3]), (2, [16, 5]), (3, [7, 8, 9, 10])])}
    for convention in ("nist", "sacrerouge"):
        scored.clear()
        with_memo, without = curves(changed, convention)
        assert with_memo == without
        assert len(scored) == 1 + 7 * 5 and {len(refs) for refs in scored} == set(range(1, 9))  # T3 alone
