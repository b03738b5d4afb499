"""Adjudicating two pyramids of a topic (``annotation/adjudication/pyramids.py``, ``pyramid_merge``):
the comparison items, the merged pyramid checked against the content written out by hand, the
record and history, re-adjudication, refusals, and what the adjudicated pyramid changes elsewhere
(construction agreement leaves it out, peers are annotated against it, scores rest on it)."""

import pytest
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError

from annotation.adjudication import pyramid_merge, pyramids
from annotation.adjudication.models import PyramidAdjudication
from annotation.history.models import Change
from annotation.peers import assignments
from annotation.peers.editing import add_match
from annotation.peers.models import PeerAnnotation
from annotation.peers.results import score_rows
from annotation.pyramids import construction
from annotation.pyramids.models import SCU, Pyramid, PyramidAgreement
from scoring.model import SCU as ScoringSCU
from scoring.model import Contributor, Convention
from scoring.model import PeerAnnotation as ScoringAnnotation
from scoring.model import Pyramid as ScoringPyramid
from scoring.scores import score_peer

from tests.adjudication.pyramid_world import build, content

pytestmark = pytest.mark.django_db

DECISIONS = {"m2-2": "union_a", "m3-3": "b", "a4": "drop", "b5": "b"}
# What those decisions make, written out: SCU 1 as both have it; "dogs bark" with A's and B's
# contributors and C's from ann2 (weight 3); ann2's "birds sing" (A 20-27); ann2's "horses run".
EXPECTED = {
    1: ("cats purr", {"A": ((0, 9),), "B": ((0, 9),), "C": ((0, 9),)}),
    2: ("dogs bark", {"A": ((10, 19),), "B": ((10, 19),), "C": ((10, 19),)}),
    3: ("birds sing", {"A": ((20, 27),)}),
    4: ("horses run", {"B": ((30, 39),)}),
}


@pytest.fixture
def world(django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        dataset, topic, a, b = build()
    coordinator = get_user_model().objects.create_user("coord")
    dataset.coordinators.add(coordinator)
    return dataset, topic, a, b, coordinator


def test_items_pair_the_scus_as_construction_agreement_aligns_them(world):
    _, _, a, b, _ = world
    comparison = pyramids.compare(a, b)
    kinds = {i.key: (i.kind, i.agreed, i.differences) for i in comparison.items}
    assert kinds == {
        "m1-1": ("matched", True, []),
        "m2-2": ("matched", False, ["label", "weight 2 vs 3"]),
        "m3-3": ("matched", False, ["spans"]),
        "a4": ("only_a", False, ["only in A"]),
        "b5": ("only_b", False, ["only in B"]),
    }
    # The pairs are the construction agreement's SCU matching, not another one.
    spans, _ = construction.stored_span_pyramids([a, b])
    alignment = construction.compare(spans[a.pk], spans[b.pk], construction.THRESHOLD).scus
    assert {(m.a, m.b) for m in alignment.matched} == {(1, 1), (2, 2), (3, 3)}
    assert (alignment.unmatched_a, alignment.unmatched_b) == ((4,), (5,))
    items = {i.key: i for i in comparison.items}
    assert items["m2-2"].choices == ("a", "b", "union_a", "union_b", "both", "drop")
    assert items["m3-3"].choices == ("a", "b", "union_a", "union_b", "both", "drop")
    assert items["a4"].choices == ("a", "drop") and items["b5"].choices == ("b", "drop")
    assert [r.kind for r in items["m2-2"].references] == ["same", "same", "only_b"]
    assert [i.key for i in comparison.items] == ["m1-1", "m2-2", "m3-3", "a4", "b5"], "heaviest first, then by uid"


def test_merge_makes_the_decided_pyramid(world, django_capture_on_commit_callbacks):
    _, topic, a, b, coordinator = world
    before = (content(a), content(b), a.revision, b.revision)
    comparison = pyramids.compare(a, b)
    with django_capture_on_commit_callbacks(execute=True):
        adjudicated = pyramids.adjudicate(a, b, coordinator, DECISIONS, comparison.token)
    assert content(adjudicated) == EXPECTED
    weights = {uid: len(refs) for uid, (_, refs) in content(adjudicated).items()}
    assert weights == {1: 3, 2: 3, 3: 1, 4: 1}
    assert (adjudicated.creator, adjudicated.status, adjudicated.topic) == (None, "done", topic)
    assert set(adjudicated.references.all()) == set(a.references.all())
    a.refresh_from_db(), b.refresh_from_db()
    assert (content(a), content(b), a.revision, b.revision) == before, "the annotators' pyramids stay as they were"
    record = PyramidAdjudication.objects.get(topic=topic)
    assert record.pyramid == adjudicated and record.adjudicator == coordinator and set(record.sources.all()) == {a, b}
    assert record.decisions == DECISIONS and record.uids == {"m1-1": 1, "m2-2": 2, "m3-3": 3, "b5": 4}
    change = Change.objects.get(pyramid=adjudicated)
    assert change.action == "adjudicate" and change.user == coordinator
    assert set(change.after) == {"1", "2", "3", "4"} and all(v is None for v in change.before.values())
    assert "ann1" in adjudicated.source and "ann2" in adjudicated.source


@pytest.mark.parametrize(
    "choice,expected",
    [
        ("a", [("dogs bark", {"A", "B"})]),
        ("b", [("dogs are barking", {"A", "B", "C"})]),
        ("union_b", [("dogs are barking", {"A", "B", "C"})]),
        ("both", [("dogs bark", {"A", "B"}), ("dogs are barking", {"A", "B", "C"})]),
        ("drop", []),
    ],
)
def test_each_choice_of_a_matched_pair(world, choice, expected):
    _, _, a, b, coordinator = world
    comparison = pyramids.compare(a, b)
    adjudicated = pyramids.adjudicate(a, b, coordinator, DECISIONS | {"m2-2": choice}, comparison.token)
    dogs = [(label, set(refs)) for label, refs in content(adjudicated).values() if "dog" in label]
    assert dogs == expected


def test_union_takes_the_chosen_sides_words_where_both_contribute(world):
    _, _, a, b, coordinator = world
    comparison = pyramids.compare(a, b)
    for choice, span in (("union_a", (20, 29)), ("union_b", (20, 27))):
        adjudicated = pyramids.adjudicate(a, b, coordinator, DECISIONS | {"m3-3": choice}, pyramids.compare(a, b).token)
        birds = [refs for label, refs in content(adjudicated).values() if label == "birds sing"]
        assert birds == [{"A": (span,)}], choice
    assert comparison.token == pyramids.compare(a, b).token, "adjudicating never touches the sources"


def test_refusals_write_nothing(world):
    _, topic, a, b, coordinator = world
    comparison = pyramids.compare(a, b)
    with pytest.raises(ValidationError, match="Decide every disagreement first.*SCU 4"):
        pyramids.adjudicate(a, b, coordinator, {k: v for k, v in DECISIONS.items() if k != "a4"}, comparison.token)
    with pytest.raises(ValidationError, match="Decide every disagreement"):
        pyramids.adjudicate(
            a, b, coordinator, DECISIONS | {"a4": "b"}, comparison.token
        )  # not a choice of an A-only SCU
    with pytest.raises(ValidationError, match="changed since the page was opened"):
        pyramids.adjudicate(a, b, coordinator, DECISIONS, "0:0,0:0")
    SCU.objects.filter(pyramid=b, uid=1).delete()  # no agreed SCU left: each can be dropped
    b = Pyramid.objects.get(pk=b.pk)
    now = pyramids.compare(a, b)
    assert not now.agreed
    with pytest.raises(ValidationError, match="Every SCU was dropped"):
        pyramids.adjudicate(a, b, coordinator, {i.key: "drop" for i in now.items}, now.token)
    assert not PyramidAdjudication.objects.exists() and topic.pyramids.count() == 2
    with pytest.raises(pyramids.NotComparable, match="itself"):
        pyramids.compare(a, a)
    Pyramid.objects.filter(pk=b.pk).update(status="in_progress")
    with pytest.raises(pyramids.NotComparable, match=f"not finished yet: #{b.pk} ann2"):
        pyramids.compare(a, Pyramid.objects.get(pk=b.pk))


def test_adjudicating_again_keeps_uids_and_matched_scus(world, django_capture_on_commit_callbacks):
    _, topic, a, b, coordinator = world
    adjudicated = pyramids.adjudicate(a, b, coordinator, DECISIONS, pyramids.compare(a, b).token)
    with pytest.raises(pyramids.NotComparable, match="adjudicated pyramid"):
        pyramids.compare(a, adjudicated)
    peer = topic.peersummarys.get()
    ann3 = get_user_model().objects.create_user("ann3")
    annotation = assignments.annotation_for(topic.assignments.create(annotator=ann3, task="annotate_peers"), peer)
    assert annotation.pyramid == adjudicated, "peers are annotated against the adjudicated pyramid"
    add_match(annotation, SCU.objects.get(pyramid=adjudicated, uid=4), [(30, 40)])  # "horses run"
    again = pyramids.adjudicate(a, b, coordinator, DECISIONS | {"m2-2": "b", "a4": "a"}, pyramids.compare(a, b).token)
    assert again == adjudicated and Pyramid.objects.filter(topic=topic).count() == 3
    labels = {uid: label for uid, (label, _) in content(again).items()}
    assert labels == {1: "cats purr", 2: "dogs are barking", 3: "birds sing", 4: "horses run", 5: "fish swim"}, (
        "an SCU keeps its uid; a new one gets a uid never used"
    )
    with pytest.raises(ValidationError, match="SCU 4 is matched in 1 peer annotation"):
        pyramids.adjudicate(a, b, coordinator, DECISIONS | {"b5": "drop"}, pyramids.compare(a, b).token)
    assert labels == {uid: label for uid, (label, _) in content(again).items()}


def test_construction_agreement_compares_the_annotators_pyramids_only(world, django_capture_on_commit_callbacks):
    _, topic, a, b, coordinator = world
    before = PyramidAgreement.objects.get(topic=topic).values
    pyramids.adjudicate(a, b, coordinator, DECISIONS, pyramids.compare(a, b).token)
    assert construction.stale_topics() == [topic.pk]
    assert construction.recompute_topics([topic.pk]) == 1  # what the background job runs
    after = PyramidAgreement.objects.get(topic=topic)
    assert [(p["a"], p["b"]) for p in after.values["pairs"]] == [(a.pk, b.pk)]
    assert after.values["pairs"][0]["pairwise_f1"] == before["pairs"][0]["pairwise_f1"]
    assert construction.stale_topics() == []


def test_scores_rest_on_the_adjudicated_pyramid(world, django_capture_on_commit_callbacks):
    _, topic, a, b, coordinator = world
    peer = topic.peersummarys.get()
    ann3 = get_user_model().objects.create_user("ann3")
    assignment = topic.assignments.create(annotator=ann3, task="annotate_peers")
    with django_capture_on_commit_callbacks(execute=True):
        before = assignments.annotation_for(assignment, peer)
        assert before.pyramid == b, "before adjudication: the newest finished pyramid"
        add_match(before, SCU.objects.get(pyramid=b, uid=1), [(0, 9)])
        assignments.mark_done(assignment)
    rows = score_rows(topic.dataset.topics.all(), Convention.NIST)
    assert [(r["kind"], r["version"]) for r in rows if r["kind"] == "peer"] == [("peer", "ann3")]
    assert sorted({r["version"] for r in rows if r["kind"] == "reference"}) == ["ann1", "ann2"]

    with django_capture_on_commit_callbacks(execute=True):
        adjudicated = pyramids.adjudicate(a, b, coordinator, DECISIONS, pyramids.compare(a, b).token)
    rows = score_rows(topic.dataset.topics.all(), Convention.NIST)
    assert [r for r in rows if r["kind"] == "peer"] == [], (
        "annotations against the annotators' pyramids are no longer scored"
    )
    references = [r for r in rows if r["kind"] == "reference"]
    assert [(r["summary"], r["version"]) for r in references] == [
        ("A", "pyramid: adjudicated"),
        ("B", "pyramid: adjudicated"),
        ("C", "pyramid: adjudicated"),
    ]

    assignment.status = "in_progress"
    assignment.save()
    with django_capture_on_commit_callbacks(execute=True):
        annotation = assignments.annotation_for(assignment, peer)
        assert annotation.pyramid == adjudicated
        add_match(annotation, SCU.objects.get(pyramid=adjudicated, uid=1), [(0, 9)])  # cats purr (3)
        add_match(annotation, SCU.objects.get(pyramid=adjudicated, uid=4), [(30, 40)])  # horses run (1)
        assignments.mark_done(assignment)
    rows = [r for r in score_rows(topic.dataset.topics.all(), Convention.NIST) if r["kind"] == "peer"]
    assert [r["version"] for r in rows] == ["ann3; pyramid: adjudicated"]
    # Independently: the pyramid written out (EXPECTED) and the scoring library.
    expected = ScoringPyramid(
        ("A", "B", "C"),
        tuple(
            ScoringSCU(uid, tuple(Contributor(frozenset({ref})) for ref in refs)) for uid, (_, refs) in EXPECTED.items()
        ),
    )
    score = score_peer(expected, ScoringAnnotation({1: 1, 4: 1}, 0), Convention.NIST)
    # By hand: weights 3, 3, 1, 1 over 3 references: Xa = round(8/3) = 3 SCUs, MaxWeight = 3 + 3 + 1 = 7; D = 4.
    assert score.modified == pytest.approx(4 / 7)
    assert rows[0]["modified"] == pytest.approx(score.modified)
    # Agreement still sees the annotators' own work: the annotation against ann2's pyramid is untouched.
    assert PeerAnnotation.objects.get(pk=before.pk).pyramid == b


def test_pure_merge_refuses_an_undecided_item(world):
    _, _, a, b, _ = world
    comparison = pyramids.compare(a, b)
    with pytest.raises(ValueError, match="undecided: a4"):
        pyramid_merge.merge(comparison.items, {k: v for k, v in DECISIONS.items() if k != "a4"})
    assert pyramid_merge.assign_uids(["x", "y", "z"], {"y": 2}, 7) == ([8, 2, 9], 9)
