"""A coordinator of a dataset (in the coordinator role), a coordinator of another dataset, an
annotator assigned to a topic of the dataset, and a user with no role; fast password hashing.
``topic``: that topic with summaries some work rests on, and a second topic."""

from types import SimpleNamespace

import pytest
from django.contrib.auth.models import User

from annotation.corpus.models import Assignment, Dataset, PeerSummary, ReferenceSummary, Topic
from annotation.corpus.roles import ANNOTATOR, COORDINATOR, role_group
from annotation.dashboards.models import Judgment
from annotation.peers.editing import add_match
from annotation.peers.models import PeerAnnotation
from annotation.pyramids.editing import add_contributor
from annotation.pyramids.models import SCU, Pyramid

PASSWORD = "set-it-up-2026"
TEXT = "The dam burst at night and the valley flooded."


@pytest.fixture
def people(db):
    coord = User.objects.create_user("coord", password=PASSWORD)
    coord.groups.add(role_group(COORDINATOR))
    other = User.objects.create_user("other", password=PASSWORD)
    other.groups.add(role_group(COORDINATOR))
    ann = User.objects.create_user("ann", password=PASSWORD)
    ann.groups.add(role_group(ANNOTATOR))
    nobody = User.objects.create_user("nobody", password=PASSWORD)
    dataset = Dataset.objects.create(name="Pilot")
    dataset.coordinators.add(coord)
    Dataset.objects.create(name="Elsewhere").coordinators.add(other)
    topic = Topic.objects.create(dataset=dataset, external_id="D0601")
    Assignment.objects.create(topic=topic, annotator=ann, task="annotate_peers")
    return SimpleNamespace(coord=coord, other=other, ann=ann, nobody=nobody, dataset=dataset, topic=topic)


@pytest.fixture
def topic(people):
    """D0601 of the coordinator's dataset: references A (contributes to pyramid 1), B (listed by
    pyramid 1 without contributing), C (in no pyramid), D (listed by an empty pyramid); peers 1
    (annotated), 2 (free) and 3 (judged)."""
    t = people.topic
    refs = {r: ReferenceSummary.objects.create(topic=t, external_id=r, text=f"{TEXT} ({r})") for r in "ABCD"}
    built = Pyramid.objects.create(topic=t, creator=people.ann)
    built.references.set([refs["A"], refs["B"]])
    scu = SCU.objects.create(pyramid=built, uid=1, label="The dam burst")
    add_contributor(scu, refs["A"], [(0, 12)])
    empty = Pyramid.objects.create(topic=t)
    empty.references.set([refs["D"]])
    peers = {p: PeerSummary.objects.create(topic=t, external_id=p, text=f"Peer {p}: the dam failed.") for p in "123"}
    annotation = PeerAnnotation.objects.create(peer=peers["1"], pyramid=built, annotator=people.ann, status="done")
    add_match(annotation, scu, [(8, 15)])
    Judgment.objects.create(topic=t, summary="3", metric="content_responsiveness", value=3)
    other = Topic.objects.create(dataset=people.dataset, external_id="D0602", title="Another")
    ReferenceSummary.objects.create(topic=other, external_id="A", text="Other text.")
    return SimpleNamespace(
        topic=t, refs=refs, peers=peers, built=built, empty=empty, annotation=annotation, other=other
    )
