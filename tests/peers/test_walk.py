"""Where an annotator stands in a topic (``assignments.walk``, part of every annotation document):
the next peer not done, in natural order after the open one, with the annotator's annotation of it
against the topic's pyramid for peers, and the progress, in three statements whatever the topic."""

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotation.corpus.models import Assignment, PeerSummary
from annotation.peers.assignments import walk
from annotation.peers.models import PeerAnnotation
from annotation.pyramids.models import Pyramid

from tests.foundation import factories

pytestmark = pytest.mark.django_db


def test_the_next_peer_skips_done_ones_and_names_its_annotation_against_the_pyramid_for_peers():
    ann, other = User.objects.create_user("ann"), User.objects.create_user("other")
    t, refs = factories.topic("T1", "D1")
    Assignment.objects.create(topic=t, annotator=ann, task=Assignment.Task.ANNOTATE_PEERS)
    finished, _ = factories.pyramid(t, refs)
    Pyramid.objects.filter(pk=finished.pk).update(status=Pyramid.Status.DONE)
    newer, _ = factories.pyramid(t, refs)  # newer but unfinished: the finished one is annotated against
    peers = {p: PeerSummary.objects.create(topic=t, external_id=p, text=f"Peer {p}.") for p in ("1", "2", "10", "3")}

    def annotation(peer, pyramid, user=ann, status=PeerAnnotation.Status.DONE):
        return PeerAnnotation.objects.create(peer=peers[peer], pyramid=pyramid, annotator=user, status=status)

    opened = annotation("1", finished, status=PeerAnnotation.Status.IN_PROGRESS)
    annotation("2", finished)  # done: skipped
    annotation("2", finished, user=other)  # another's: counts nothing for ann
    # unfinished, and not against the pyramid for peers: not done, and not the annotation to continue
    annotation("3", newer, status=PeerAnnotation.Status.IN_PROGRESS)
    started = annotation("10", finished, status=PeerAnnotation.Status.IN_PROGRESS)
    with CaptureQueriesContext(connection) as captured:
        where = walk(opened)
    assert len(captured) <= 3
    assignment = Assignment.objects.get(annotator=ann).pk
    assert where == {
        "next": {"assignment": assignment, "peer": "3", "peer_id": peers["3"].pk, "annotation": None},
        "progress": {"done": 1, "total": 4},
    }
    assert walk(annotation("3", finished))["next"] == {
        "assignment": assignment,
        "peer": "10",
        "peer_id": peers["10"].pk,
        "annotation": started.pk,
    }  # natural order: 1, 2, 3, 10; from 3 the next not done is 10 (1 is in progress, after 10)
    PeerAnnotation.objects.filter(annotator=ann).update(status=PeerAnnotation.Status.DONE)
    assert walk(opened) == {"next": None, "progress": {"done": 4, "total": 4}}


def test_no_assignment_no_walk():
    t, refs = factories.topic("T1", "D1")
    p, _ = factories.pyramid(t, refs)
    annotation = factories.annotation(t, p, annotator=User.objects.create_user("ann"))
    assert walk(annotation) == {"next": None, "progress": None}
