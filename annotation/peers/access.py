"""The access rule of peer annotations, registered with ``annotation.access.rules`` (a layer below):
annotators annotate, and read, only their own annotations in topics they are assigned to annotate,
and also read the pyramids their annotations are against; nobody else's annotation is lost to a
pyramid's deletion by an annotator. Coordinators of the dataset may do everything.
"""

from django.db.models import Q
from rest_framework.exceptions import PermissionDenied

from annotation.access.rules import (
    ANNOTATE,
    Rule,
    assigned_topics,
    at,
    can_change,
    extend_read,
    in_topics,
    owned,
    refuse_destroy,
    register,
    register_kind,
)
from annotation.corpus.models import Assignment
from annotation.peers.models import PeerAnnotation, PeerMatch
from annotation.pyramids.models import Pyramid


def _annotates(rule: Rule, user) -> Q:
    return owned(rule, user) & in_topics(rule, user, ANNOTATE)


def _pyramids_annotated_against(rule: Rule, user) -> Q:
    """A peer annotator reads the pyramids their own annotations (in topics they annotate) use."""
    own = PeerAnnotation.objects.filter(annotator=user, pyramid__topic__in=assigned_topics(user, ANNOTATE))
    return Q(**{at(rule.pyramid, "pk__in"): own.values("pyramid_id")})


def _may_start(user, data: dict) -> bool:
    topic = data["peer"].topic
    return can_change(user, topic) or Assignment.objects.filter(annotator=user, topic=topic, task=ANNOTATE).exists()


def _others_annotated_against(user, pyramid: Pyramid) -> None:
    """Deleting a pyramid deletes every peer annotation against it: annotators may delete their
    pyramid only while nobody else has annotated against it (coordinators may always)."""
    if pyramid.annotations.exclude(annotator=user).exists():
        raise PermissionDenied("Other annotators' peer annotations use this pyramid: only a coordinator may delete it.")


register_kind("annotation", read=_annotates, write=_annotates)
extend_read("pyramid", _pyramids_annotated_against)
refuse_destroy(Pyramid, _others_annotated_against)
register(
    PeerAnnotation,
    Rule("annotation", "pyramid__topic", "pyramid__topic__dataset", owner="annotator"),
    create=_may_start,
)
register(
    PeerMatch,
    Rule(
        "annotation", "annotation__pyramid__topic", "annotation__pyramid__topic__dataset", owner="annotation__annotator"
    ),
    create=lambda user, data: can_change(user, data["annotation"]),
)
