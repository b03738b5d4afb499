"""The assisted builder's service and API (issue 30 §2): proposals read from the stored pyramid, who
may ask for them, accepting them as one action (one undo step) recorded as proposed, and the
per-dataset setting that turns assistance off.

The proposals engine is replaceable (``pyramids.proposals``): only obvious cases are asserted here
(a reference holding the contributor's very sentence gets that sentence proposed first)."""

import re
from types import SimpleNamespace

import pytest
from django.contrib.auth.models import User
from rest_framework.test import APIClient

from annotation.corpus.models import Assignment
from annotation.history.models import Change
from annotation.pyramids import assistance, proposals
from annotation.pyramids.editing import add_contributor
from annotation.pyramids.models import SCU, Contributor, Pyramid

from tests.api.world import client_for
from tests.foundation.factories import topic

DAM = "The old dam burst at night"
TEXTS = {
    "A": f"{DAM}. Engineers blamed the concrete.",
    "B": f"Rain fell for days. {DAM}. The valley flooded.",
    "C": "Nobody was hurt in the town. Rain fell for days.",
    "D": "Officials praised the rescue teams.",
}


@pytest.fixture
def assisted(db):
    users = {name: User.objects.create_user(name) for name in ("ann", "bob", "carol", "coord")}
    t, refs = topic("T1", "Study", **TEXTS)
    t.dataset.coordinators.add(users["coord"])
    for name, task in [("ann", "build_pyramid"), ("bob", "build_pyramid"), ("carol", "annotate_peers")]:
        Assignment.objects.create(topic=t, annotator=users[name], task=task)
    pyramid = Pyramid.objects.create(topic=t, creator=users["ann"])
    pyramid.references.set(refs.values())
    scu = SCU.objects.create(pyramid=pyramid, uid=1, label="The dam burst")
    add_contributor(scu, refs["A"], [(0, len(DAM))])
    return SimpleNamespace(users=users, topic=t, refs=refs, pyramid=pyramid, scu=scu)


def client(world, name):
    return client_for(world.users.get(name))


def words(text: str) -> str:
    """A proposal's text without the punctuation an engine may keep around a sentence."""
    return re.sub(r"^\W+|\W+$", "", text)


def span_of(ref, phrase):
    start = ref.text.index(phrase)
    return {"start": start, "end": start + len(phrase)}


def test_the_contributors_very_sentence_in_another_reference_is_proposed_first(assisted):
    proposed = assistance.contributor_proposals(assisted.scu)
    b = assisted.refs["B"]
    assert proposed[0]["reference"] == b.pk
    assert proposed[0]["parts"][0]["start"] == span_of(b, DAM)["start"] and words(proposed[0]["text"]) == DAM
    assert assisted.refs["A"].pk not in {p["reference"] for p in proposed}, "A contributes already"
    assert [p["confidence"] for p in proposed] == sorted((p["confidence"] for p in proposed), reverse=True)
    answer = client(assisted, "ann").get(f"/api/scus/{assisted.scu.pk}/proposals/")
    assert answer.status_code == 200 and answer.json() == proposed


def test_new_scu_proposals_pair_uncovered_sentences_of_two_references(assisted):
    proposed = client(assisted, "ann").get(f"/api/pyramids/{assisted.pyramid.pk}/proposals/").json()
    b, c = assisted.refs["B"], assisted.refs["C"]
    rain = [p for p in proposed if {b.pk, c.pk} <= {x["reference"] for x in p["contributors"]}]
    assert rain, "the same sentence in B and C, in no SCU yet, is proposed as one"
    said = {words(x["text"]) for x in rain[0]["contributors"] if x["reference"] in (b.pk, c.pk)}
    assert said == {"Rain fell for days"}
    covered = span_of(assisted.refs["A"], DAM)
    for p in proposed:  # nothing proposed over what a contributor holds already
        for x in p["contributors"]:
            if x["reference"] == assisted.refs["A"].pk:
                assert all(part["end"] <= covered["start"] or part["start"] >= covered["end"] for part in x["parts"])


def test_the_references_are_read_once_and_the_answers_follow_the_pyramid(assisted, monkeypatch):
    """The topic's words are read once for every request on the same texts (``proposals.read_topic``),
    while what is proposed still follows the pyramid as it changes: the same answers as a fresh read."""
    proposals.read_topic.cache_clear()
    reads, read = [], proposals.Topic
    monkeypatch.setattr(proposals, "Topic", lambda references: reads.append(references) or read(references))
    b = assisted.refs["B"]
    assert b.pk in {p["reference"] for p in assistance.contributor_proposals(assisted.scu)}
    before = assistance.scu_proposals(assisted.pyramid)
    span = span_of(b, DAM)
    add_contributor(assisted.scu, b, [(span["start"], span["end"])])
    rain = span_of(b, "Rain fell for days")
    add_contributor(
        SCU.objects.create(pyramid=assisted.pyramid, uid=2, label="Rain"), b, [(rain["start"], rain["end"])]
    )
    after = assistance.contributor_proposals(assisted.scu), assistance.scu_proposals(assisted.pyramid)
    assert len(reads) == 1
    assert b.pk not in {p["reference"] for p in after[0]}, "B contributes now"
    assert b.pk in {x["reference"] for p in before for x in p["contributors"]}
    assert b.pk not in {x["reference"] for p in after[1] for x in p["contributors"]}, "B's rain is in an SCU now"
    proposals.read_topic.cache_clear()
    assert (assistance.contributor_proposals(assisted.scu), assistance.scu_proposals(assisted.pyramid)) == after
    assert len(reads) == 2


@pytest.mark.parametrize(
    "who, status",
    [("anon", 401), ("bob", 404), ("carol", 403), ("coord", 200), ("ann", 200)],
)
def test_only_the_builder_and_coordinators_get_proposals(assisted, who, status):
    """Another annotator building the topic never learns the pyramid exists; a peer annotator who
    may read the finished pyramid is refused its proposals."""
    assisted.pyramid.status = Pyramid.Status.DONE  # carol may read it now: the proposals stay the builder's
    assisted.pyramid.save()
    for url in (f"/api/scus/{assisted.scu.pk}/proposals/", f"/api/pyramids/{assisted.pyramid.pk}/proposals/"):
        assert client(assisted, who).get(url).status_code == status, url


def accept(world, who, contributors, **headers):
    return client(world, who).post(
        f"/api/scus/{world.scu.pk}/accept/", {"contributors": contributors}, format="json", **headers
    )


def test_accepting_adds_every_contributor_in_one_undo_step_with_provenance(assisted):
    b, c = assisted.refs["B"], assisted.refs["C"]
    before = Change.objects.count()
    answer = accept(
        assisted,
        "ann",
        [{"reference": b.pk, "parts": [span_of(b, DAM)]}, {"reference": c.pk, "parts": [span_of(c, "Nobody")]}],
    )
    assert answer.status_code == 200, answer.json()
    assert Change.objects.count() == before + 1, "one action: one undo step"
    added = Contributor.objects.filter(scu=assisted.scu).exclude(reference=assisted.refs["A"])
    assert sorted((x.reference.external_id, x.proposed) for x in added) == [("B", True), ("C", True)]
    assert not Contributor.objects.get(scu=assisted.scu, reference=assisted.refs["A"]).proposed
    delta = {x["reference"]: x["proposed"] for x in answer.json()["delta"]["scus"][0]["contributors"]}
    assert delta == {assisted.refs["A"].pk: False, b.pk: True, c.pk: True}

    ann = client(assisted, "ann")
    assert ann.post(f"/api/pyramids/{assisted.pyramid.pk}/undo/", {}, format="json").status_code == 200
    assert list(
        Contributor.objects.filter(scu__pyramid=assisted.pyramid).values_list("reference__external_id", flat=True)
    ) == ["A"]
    assert ann.post(f"/api/pyramids/{assisted.pyramid.pk}/redo/", {}, format="json").status_code == 200
    redone = Contributor.objects.filter(scu__pyramid=assisted.pyramid)
    assert sorted((x.reference.external_id, x.proposed) for x in redone) == [("A", False), ("B", True), ("C", True)]


def test_an_accepted_scu_and_its_contributors_are_recorded_as_proposed(assisted):
    b, c = assisted.refs["B"], assisted.refs["C"]
    body = {
        "label": "It rained for days",
        "contributors": [
            {"reference": b.pk, "parts": [span_of(b, "Rain fell for days")]},
            {"reference": c.pk, "parts": [span_of(c, "Rain fell for days")]},
        ],
    }
    answer = client(assisted, "ann").post(f"/api/pyramids/{assisted.pyramid.pk}/accept-scu/", body, format="json")
    assert answer.status_code == 200, answer.json()
    scu = SCU.objects.get(pk=answer.json()["scu"]["id"])
    assert (scu.uid, scu.label, scu.proposed) == (2, "It rained for days", True)
    assert sorted((x.reference.external_id, x.proposed) for x in scu.contributors.all()) == [("B", True), ("C", True)]
    assert not SCU.objects.get(pk=assisted.scu.pk).proposed


def test_a_refused_acceptance_writes_nothing(assisted):
    a, b = assisted.refs["A"], assisted.refs["B"]
    twin = accept(
        assisted,
        "ann",
        [{"reference": b.pk, "parts": [span_of(b, DAM)]}, {"reference": a.pk, "parts": [span_of(a, "Engineers")]}],
    )
    assert twin.status_code == 400 and "already has a contributor" in str(twin.json())
    _, other = topic("T2", "Elsewhere", A="Secret text of another topic.")
    foreign = accept(assisted, "ann", [{"reference": other["A"].pk, "parts": [{"start": 0, "end": 6}]}])
    assert foreign.status_code == 400 and "Secret" not in str(foreign.json())
    past = accept(assisted, "ann", [{"reference": b.pk, "parts": [{"start": 0, "end": 10_000}]}])
    assert past.status_code == 400
    assert Contributor.objects.filter(scu__pyramid=assisted.pyramid).count() == 1


def test_others_may_not_accept(assisted):
    b = assisted.refs["B"]
    body = [{"reference": b.pk, "parts": [span_of(b, DAM)]}]
    assert accept(assisted, "anon", body).status_code == 401
    assert accept(assisted, "bob", body).status_code == 404
    assert Contributor.objects.filter(scu__pyramid=assisted.pyramid).count() == 1


def test_accepting_needs_csrf_in_a_session(assisted):
    b = assisted.refs["B"]
    session = APIClient(enforce_csrf_checks=True)
    session.force_login(assisted.users["ann"])
    body = {"contributors": [{"reference": b.pk, "parts": [span_of(b, DAM)]}]}
    refused = session.post(f"/api/scus/{assisted.scu.pk}/accept/", body, format="json", HTTP_IF_MATCH="*")
    assert refused.status_code == 403 and "CSRF" in refused.json()["detail"]
    assert Contributor.objects.filter(scu__pyramid=assisted.pyramid).count() == 1


def test_assistance_off_proposes_nothing_and_refuses_acceptance(assisted):
    dataset = assisted.topic.dataset
    dataset.assisted_building = False
    dataset.save()
    ann, b = client(assisted, "ann"), assisted.refs["B"]
    for url in (f"/api/scus/{assisted.scu.pk}/proposals/", f"/api/pyramids/{assisted.pyramid.pk}/proposals/"):
        answer = ann.get(url)
        assert answer.status_code == 403 and "Assistance is off" in answer.json()["detail"]
    refused = accept(assisted, "ann", [{"reference": b.pk, "parts": [span_of(b, DAM)]}])
    assert refused.status_code == 403
    body = {"label": "x", "contributors": [{"reference": b.pk, "parts": [span_of(b, DAM)]}]}
    assert ann.post(f"/api/pyramids/{assisted.pyramid.pk}/accept-scu/", body, format="json").status_code == 403
    assert Contributor.objects.filter(scu__pyramid=assisted.pyramid).count() == 1
    with pytest.raises(assistance.AssistanceOff):
        assistance.contributor_proposals(assisted.scu)
