"""Automatic pyramid scores (annotation/pyramids/automatic_scores.py, automatic_peer_scores.py): every
suggestion from the pyramid alone accepted, scored by scoring/scores.py; blind (no annotation of the
peer, nor of any other, moves it), kept out of the expert scores, shown apart on the meta-evaluation
page (tests/dashboards/test_automatic_section.py)."""

import pytest
from django.contrib.auth.models import User

from annotation.corpus.models import PeerSummary
from annotation.peers.editing import add_match
from annotation.peers.models import PeerAnnotation
from annotation.peers.results import score_rows
from annotation.pyramids import automatic_peer_scores
from annotation.pyramids.automatic_scores import accepted, automatic_score
from annotation.pyramids.editing import add_contributor
from annotation.pyramids.models import SCU, Pyramid
from annotation.pyramids.suggestion_features import ScuText, word_weights
from annotation.pyramids.suggestion_model import PeerCase, fit, save
from scoring.model import Pyramid as ScoringPyramid
from scoring.scores import prepare

from tests.foundation.factories import topic
from tests.pyramids.test_suggestions import _constructed_cases

REFS = {
    "A": "The dam burst at night and the valley flooded.",
    "B": "Engineers blamed the old concrete of the dam.",
    "C": "The valley flooded after the dam burst.",
}
# uid -> (label, [(reference, contributor words)])
SCUS = {
    1: ("The dam burst", [("A", "The dam burst at night"), ("C", "the dam burst")]),
    2: ("The valley flooded", [("A", "the valley flooded"), ("C", "The valley flooded")]),
    3: ("The concrete was old", [("B", "the old concrete")]),
    4: ("Engineers blamed", [("B", "Engineers blamed")]),
}
PEERS = {
    "1": "The dam burst at night. Nobody was hurt.",
    "2": "The valley flooded and the dam burst at night.",
    "3": "Engineers blamed the old concrete of the dam.",
    "4": "Nothing of note happened in the town.",
}


def test_the_automatic_score_is_the_modified_score_of_the_accepted_suggestions():
    """Weights 2, 2, 1, 1 over 3 references: Xa = round(6 / 3) = 2, MaxWeight(2) = 4. Peer 2 holds
    SCUs 1 and 2 (D = 4: 1.0), peer 1 SCU 1 (0.5), peer 4 nothing (0)."""
    scus = [ScuText(uid, label, [words for _, words in contributors]) for uid, (label, contributors) in SCUS.items()]
    pyramid = prepare(ScoringPyramid.of("ABC", {uid: [[ref] for ref, _ in c] for uid, (_, c) in SCUS.items()}))
    weights = word_weights(list(REFS.values()) + list(PEERS.values()))
    found = {peer: accepted(PeerCase(text, scus, weights), None) for peer, text in PEERS.items()}
    assert {peer: sorted(uids) for peer, uids in found.items()} == {"1": [1], "2": [1, 2], "3": [3, 4], "4": []}
    assert {peer: automatic_score(pyramid, uids).modified for peer, uids in found.items()} == {
        "1": 0.5,
        "2": 1.0,
        "3": 0.5,
        "4": 0.0,
    }
    # blind: the annotator's earlier matches and anyone's matches of the peer are not read
    planted = PeerCase(
        PEERS["4"], scus, weights, earlier=[(1, ["Nothing of note happened"], "9")], expert=[(2, [(0, 7)])]
    )
    assert accepted(planted, None) == []


def _fresh(pyramid):
    """The pyramid as stored now (its and its topic's revisions key the cached scores)."""
    return Pyramid.objects.select_related("topic").get(pk=pyramid.pk)


@pytest.fixture
def study(db, settings, tmp_path):
    settings.SUGGESTIONS_MODEL = str(tmp_path / "absent.joblib")
    t, refs = topic("T1", "Storms", **REFS)
    pyramid = Pyramid.objects.create(topic=t, status=Pyramid.Status.DONE)
    pyramid.references.set(refs.values())
    scus = {}
    for uid, (label, contributors) in SCUS.items():
        scus[uid] = SCU.objects.create(pyramid=pyramid, uid=uid, label=label)
        for ref, words in contributors:
            at = refs[ref].text.index(words)
            add_contributor(scus[uid], refs[ref], [(at, at + len(words))])
    peers = {pid: PeerSummary.objects.create(topic=t, external_id=pid, text=text) for pid, text in PEERS.items()}
    expert = User.objects.create_user("expert")
    for pid, uids in {"1": [1], "2": [1, 2], "3": [3], "4": []}.items():  # peer 3: the expert found one SCU of two
        annotation = PeerAnnotation.objects.create(peer=peers[pid], pyramid=pyramid, annotator=expert, status="done")
        for k, uid in enumerate(uids):
            add_match(annotation, scus[uid], [(k, k + 1)])
    return t.dataset, pyramid, peers, scus


@pytest.mark.parametrize("trained", [False, True])
def test_another_annotators_annotation_of_the_peer_changes_nothing(study, trained):
    """Plant an annotation of peer 4 matching SCUs 1 and 2 (its text has neither): the automatic
    scores are identical with and without it, with the rules and with a trained model."""
    dataset, pyramid, peers, scus = study
    if trained:
        save(fit(*_constructed_cases(), "constructed"))
    before = automatic_peer_scores.compute(pyramid)
    assert before["nist"]["2"] > 0 or trained
    other = User.objects.create_user("other")
    planted = PeerAnnotation.objects.create(peer=peers["4"], pyramid=pyramid, annotator=other, status="done")
    add_match(planted, scus[1], [(0, 7)])
    add_match(planted, scus[2], [(8, 10)])
    assert automatic_peer_scores.compute(_fresh(pyramid)) == before


def test_expert_listings_never_include_automatic_scores(study):
    dataset, pyramid, peers, scus = study
    before = score_rows(dataset.topics.all(), include_references=False)
    automatic_peer_scores.compute_pyramids([pyramid.pk])
    assert automatic_peer_scores.stored(_fresh(pyramid))["nist"]["3"] == 0.5  # SCUs 3 and 4 suggested...
    after = score_rows(dataset.topics.all(), include_references=False)
    assert after == before
    assert {r["summary"]: r["modified"] for r in after} == {
        "1": 0.5,
        "2": 1.0,
        "3": 0.25,
        "4": 0.0,
    }  # ...the expert's 0.25 stays
