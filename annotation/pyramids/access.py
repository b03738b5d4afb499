"""The access rule of pyramids, registered with ``annotation.access.rules`` (a layer below, which
knows no pyramid): annotators build their own pyramid in a topic they are assigned to build, and
read the topic's finished pyramids when assigned to annotate its peers (never a pyramid being
built by someone else). Coordinators of the dataset may do everything (the rule's own part).
"""

from django.db.models import Q

from annotation.access.rules import ANNOTATE, BUILD, Rule, at, can_change, in_topics, owned, register, register_kind
from annotation.corpus.models import Assignment
from annotation.pyramids.models import SCU, Contributor, Pyramid


def _builds(rule: Rule, user) -> Q:
    return owned(rule, user) & in_topics(rule, user, BUILD)


def _reads(rule: Rule, user) -> Q:
    finished = Q(**{at(rule.pyramid, "status"): Pyramid.Status.DONE})
    return _builds(rule, user) | (in_topics(rule, user, ANNOTATE) & finished)


def _may_start(user, data: dict) -> bool:
    topic = data["topic"]
    return can_change(user, topic) or Assignment.objects.filter(annotator=user, topic=topic, task=BUILD).exists()


register_kind("pyramid", read=_reads, write=_builds)
register(Pyramid, Rule("pyramid", "topic", "topic__dataset", owner="creator", pyramid=""), create=_may_start)
register(
    SCU,
    Rule("pyramid", "pyramid__topic", "pyramid__topic__dataset", owner="pyramid__creator", pyramid="pyramid"),
    create=lambda user, data: can_change(user, data["pyramid"]),
)
register(
    Contributor,
    Rule(
        "pyramid",
        "scu__pyramid__topic",
        "scu__pyramid__topic__dataset",
        owner="scu__pyramid__creator",
        pyramid="scu__pyramid",
    ),
    create=lambda user, data: can_change(user, data["scu"]),
)
