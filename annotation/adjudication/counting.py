"""The adjudication's part of the rule of what counts (``peers.results.counting``), registered with
it: an adjudicated version replaces, for scores, the annotators' versions it settles, and a topic's
adjudicated pyramid is the one its scores rest on. Peers are a layer below adjudication, so the rule
asks these expressions instead of importing the records; ``annotation.apps`` imports this module
when the app is ready."""

from django.db.models import Exists, OuterRef

from annotation.adjudication.models import Adjudication, PyramidAdjudication
from annotation.peers.results import Adjudicated, register_adjudicated


def _adjudicated_annotation(annotation: str) -> Exists:
    return Exists(Adjudication.objects.filter(annotation=OuterRef(annotation)))


def _settles(peer: str, pyramid: str) -> Exists:
    return Exists(Adjudication.objects.filter(annotation__peer=OuterRef(peer), annotation__pyramid=OuterRef(pyramid)))


def _topic_adjudicated(topic: str) -> Exists:
    return Exists(PyramidAdjudication.objects.filter(topic=OuterRef(topic)))


def _adjudicated_pyramid(pyramid: str) -> Exists:
    return Exists(PyramidAdjudication.objects.filter(pyramid=OuterRef(pyramid)))


register_adjudicated(
    Adjudicated(
        annotation=_adjudicated_annotation,
        settles=_settles,
        topic=_topic_adjudicated,
        pyramid=_adjudicated_pyramid,
    )
)
