"""The pyramid a topic's peers are annotated against (``assignments.pyramid_to_annotate_against``),
read in one statement: the adjudicated one, else the newest finished, else the newest."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotation.adjudication.models import PyramidAdjudication
from annotation.peers.assignments import pyramid_to_annotate_against
from annotation.pyramids.models import Pyramid

from tests.foundation.factories import topic

DONE, IN_PROGRESS = Pyramid.Status.DONE, Pyramid.Status.IN_PROGRESS


def _chosen(t):
    with CaptureQueriesContext(connection) as captured:
        chosen = pyramid_to_annotate_against(t)
    assert len(captured) == 1
    return chosen


@pytest.mark.django_db
def test_the_adjudicated_pyramid_else_the_newest_finished_else_the_newest():
    t, _ = topic("T1")
    other, _ = topic("T2", dataset="Other")
    assert _chosen(t) is None
    first = Pyramid.objects.create(topic=t, status=IN_PROGRESS)
    Pyramid.objects.create(topic=other, status=DONE)  # another topic's never counts
    assert _chosen(t) == first
    second = Pyramid.objects.create(topic=t, status=IN_PROGRESS)
    assert _chosen(t) == second  # none finished: the newest
    done = Pyramid.objects.create(topic=t, status=DONE)
    Pyramid.objects.create(topic=t, status=IN_PROGRESS)  # newer, not finished
    assert _chosen(t) == done
    newer_done = Pyramid.objects.create(topic=t, status=DONE)
    assert _chosen(t) == newer_done
    PyramidAdjudication.objects.create(topic=t, pyramid=first)  # older and unfinished, but adjudicated
    assert _chosen(t) == first
