"""Who may see and change what through the API: the one place the access rule lives.

The rule (docs/api.md, "Who may do what"):

- Superusers: everything.
- Coordinators (``Dataset.coordinators``): everything inside the datasets they coordinate.
  Coordinators (the ``coordinator`` role, or coordinating any dataset) create datasets, and
  become the new dataset's coordinators.
- Lightweight pyramids (runs, their statements, tasks and answers) belong to the dataset's
  coordinators only; crowd workers never log in: a crowd link's token opens only that link's
  work (``annotation/lightweight/work.py``), one task at a time.
- Annotators see only topics they have an ``Assignment`` for, and annotation is blind:
  - the topic's dataset, reference and peer summaries: read-only;
  - pyramids (with their SCUs and contributors): their own, while they have a ``build_pyramid``
    assignment for the topic (read and write). With an ``annotate_peers`` assignment they may
    also read (never write) the pyramids peers are annotated against: the topic's *finished*
    pyramids (status ``done``) and any pyramid one of their own annotations is against. So
    nobody ever sees another annotator's pyramid while it is being built;
  - peer annotations (with their matches): only their own, while they have an ``annotate_peers``
    assignment for the topic; never another annotator's;
  - assignments: their own, read-only.

Every rule is a ``Q`` filter, used twice: querysets are filtered with the read filter (so an
object you may not see is a 404, its existence never leaks) and a write is allowed only if the
object passes the write filter (otherwise 403).
"""
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

from django.contrib.auth import get_user_model
from django.db.models import Manager, Model, Q, QuerySet
from django.db.models.sql import Query
from django.shortcuts import get_object_or_404
from rest_framework import permissions
from rest_framework.exceptions import PermissionDenied

from annotation.corpus.roles import COORDINATOR

from annotation.corpus.models import Assignment, Dataset, PeerSummary, ReferenceSummary, Topic
from annotation.lightweight.models import LightweightPyramid, LiteStatement, LiteTask
from annotation.peers.models import PeerAnnotation, PeerMatch
from annotation.pyramids.models import Contributor, Pyramid, SCU

BUILD = Assignment.Task.BUILD_PYRAMID
ANNOTATE = Assignment.Task.ANNOTATE_PEERS
NOTHING = Q(pk__in=[])


@dataclass(frozen=True)
class Rule:
    """How a model reaches its topic and its owner, and what annotators may do with it.

    ``topic``/``dataset``: lookup paths to the topic and dataset ids; ``owner``: lookup path to
    the annotator who owns the object (pyramid creator or annotation annotator), if any;
    ``pyramid``: lookup path to the pyramid, for pyramid parts; ``kind``: which annotator rule
    applies (see the module docstring).
    """

    kind: str
    topic: str | None
    dataset: str
    owner: str | None = None
    pyramid: str | None = None


RULES: dict[type[Model], Rule] = {
    Dataset: Rule("dataset", None, "pk"),
    Topic: Rule("corpus", "pk", "dataset"),
    ReferenceSummary: Rule("corpus", "topic", "topic__dataset"),
    PeerSummary: Rule("corpus", "topic", "topic__dataset"),
    Assignment: Rule("assignment", "topic", "topic__dataset", owner="annotator"),
    Pyramid: Rule("pyramid", "topic", "topic__dataset", owner="creator", pyramid=""),
    SCU: Rule("pyramid", "pyramid__topic", "pyramid__topic__dataset", owner="pyramid__creator", pyramid="pyramid"),
    Contributor: Rule("pyramid", "scu__pyramid__topic", "scu__pyramid__topic__dataset", owner="scu__pyramid__creator", pyramid="scu__pyramid"),
    PeerAnnotation: Rule("annotation", "pyramid__topic", "pyramid__topic__dataset", owner="annotator"),
    PeerMatch: Rule("annotation", "annotation__pyramid__topic", "annotation__pyramid__topic__dataset", owner="annotation__annotator"),
    LightweightPyramid: Rule("coordinated", None, "dataset"),
    LiteStatement: Rule("coordinated", "topic", "pyramid__dataset"),
    LiteTask: Rule("coordinated", "topic", "pyramid__dataset"),
}


def _at(path: str, lookup: str) -> str:
    return f"{path}__{lookup}" if path else lookup


def _assigned_topics(user, task=None) -> QuerySet:
    assignments = Assignment.objects.filter(annotator=user)
    return (assignments.filter(task=task) if task else assignments).values("topic_id")


def _coordinated(rule: Rule, user) -> Q:
    return Q(**{f"{rule.dataset}__in": Dataset.objects.filter(coordinators=user).values("pk")})


def _in_topics(rule: Rule, user, task=None) -> Q:
    return Q(**{f"{rule.topic}__in": _assigned_topics(user, task)})


def _owned(rule: Rule, user) -> Q:
    return Q(**{rule.owner: user})


def _annotated_against(rule: Rule, user) -> Q:
    """Pyramids a peer annotator reads: the topic's finished ones and those their annotations use."""
    own_annotations = PeerAnnotation.objects.filter(annotator=user, pyramid__topic__in=_assigned_topics(user, ANNOTATE))
    finished = Q(**{_at(rule.pyramid, "status"): Pyramid.Status.DONE})
    return (_in_topics(rule, user, ANNOTATE) & finished) | Q(**{_at(rule.pyramid, "pk__in"): own_annotations.values("pyramid_id")})


def read_filter(model: type[Model], user) -> Q:
    rule = RULES[model]
    if rule.kind == "dataset":
        annotator = Q(pk__in=Topic.objects.filter(pk__in=_assigned_topics(user)).values("dataset_id"))
    elif rule.kind == "corpus":
        annotator = _in_topics(rule, user)
    elif rule.kind == "assignment":
        annotator = _owned(rule, user)
    elif rule.kind == "coordinated":
        annotator = NOTHING
    elif rule.kind == "pyramid":
        annotator = (_owned(rule, user) & _in_topics(rule, user, BUILD)) | _annotated_against(rule, user)
    else:  # annotation
        annotator = _owned(rule, user) & _in_topics(rule, user, ANNOTATE)
    return _coordinated(rule, user) | annotator


def write_filter(model: type[Model], user) -> Q:
    rule = RULES[model]
    if rule.kind == "pyramid":
        annotator = _owned(rule, user) & _in_topics(rule, user, BUILD)
    elif rule.kind == "annotation":
        annotator = _owned(rule, user) & _in_topics(rule, user, ANNOTATE)
    else:
        annotator = NOTHING
    return _coordinated(rule, user) | annotator


@lru_cache(maxsize=256)
def _ruled(model: type[Model], user_id: int, write: bool) -> Query:
    """All ``model`` objects this (not super) user may see (``write``: change), as a query kept per
    process and copied for each use (``Query.chain``; never run itself).

    A rule is a few nested subqueries over assignments and coordinated datasets: Django composing
    them anew (lookups, joins) took a fifth of the app's CPU of every write (two related ids to look
    up and one write check per request: docs/performance.md). The query depends on nothing but the
    model and the user's id (who is assigned or coordinates what is read by the database when it
    runs), so it is built once per user and model."""
    rule = write_filter if write else read_filter
    return model._default_manager.filter(rule(model, user_id)).query


def _ruled_objects(model: type[Model], user, write: bool) -> QuerySet:
    """A fresh queryset of ``_ruled``'s objects (its own copy of the kept query)."""
    return QuerySet(model=model, query=_ruled(model, user.pk, write).chain())


@lru_cache(maxsize=256)
def _composed(model: type[Model], compose: Callable[[QuerySet], QuerySet], user_id: int, superuser: bool) -> Query:
    """``compose`` applied to the objects this user may see, kept per process like ``_ruled``."""
    objects = model._default_manager.all() if superuser else QuerySet(model=model, query=_ruled(model, user_id, False).chain())
    return compose(objects).query


def visible_composed(user, model: type[Model], compose: Callable[[QuerySet], QuerySet]) -> QuerySet:
    """``compose(visible(user, model's objects))``, its query composed once per user and kept (a
    fresh copy each time): for reads that filter and annotate the visible objects further on every
    request (a ``full/`` read's counted annotations took ~0.9 ms to compose). ``compose`` must be
    a module-level function depending on nothing but the queryset it is given (its prefetches are
    not kept: add them to the result)."""
    if not user.is_authenticated:
        return model._default_manager.none()
    return QuerySet(model=model, query=_composed(model, compose, user.pk, user.is_superuser).chain())


def visible(user, queryset: QuerySet | Manager) -> QuerySet:
    """The objects of ``queryset`` this user may see (all of them for superusers). A model's default
    manager (what the serializers' related fields look ids up in) costs no composing (``_ruled``)."""
    if not user.is_authenticated:
        return queryset.none()
    if user.is_superuser:
        return queryset
    if queryset is queryset.model._default_manager:
        return _ruled_objects(queryset.model, user, write=False)
    return queryset.filter(read_filter(queryset.model, user))


def can_change(user, obj: Model) -> bool:
    if user.is_superuser:
        return True
    model = type(obj)
    return _ruled_objects(model, user, write=True).filter(pk=obj.pk).exists()


def is_coordinator(user) -> bool:
    """Coordinators: members of the coordinator role, and anyone who coordinates a dataset."""
    return bool(user.is_authenticated and (
        user.is_superuser or user.groups.filter(name=COORDINATOR).exists() or Dataset.objects.filter(coordinators=user).exists()))


def coordinates(user, dataset: Dataset) -> bool:
    """Is ``user`` a coordinator of this ``dataset`` (or a superuser)? Every role check about a
    dataset asks this: coordinating another dataset, or the ``coordinator`` role alone, gives no
    right in this one."""
    return bool(user.is_authenticated and user.is_active
                and (user.is_superuser or dataset.coordinators.filter(pk=user.pk).exists()))


def coordinated_dataset(request, pk) -> Dataset:
    """The dataset if the user coordinates it; 404 if they may not see it, 403 if they only see it
    (the API views of every concept that acts on a whole dataset: transfers, construction agreement)."""
    dataset = get_object_or_404(visible(request.user, Dataset.objects.all()), pk=pk)
    if not can_change(request.user, dataset):
        raise PermissionDenied("Only the dataset's coordinators may do this.")
    return dataset


def coordinator_candidates(dataset: Dataset | None = None) -> QuerySet:
    """Who may be named a coordinator of ``dataset``: active accounts in the ``coordinator`` role
    (or superusers), and those already coordinating it (kept when the list is sent again). Never
    an annotator or an imported annotator identity: coordinating one dataset must not hand out the
    role (creating datasets, the set-up pages) through a dataset's coordinator list."""
    role = Q(is_active=True) & (Q(groups__name=COORDINATOR) | Q(is_superuser=True))
    kept = Q(coordinated_datasets=dataset) if dataset is not None and dataset.pk else NOTHING
    users = get_user_model().objects
    return users.filter(pk__in=users.filter(role | kept).values("pk"))


def may_create_dataset(user) -> bool:
    """Coordinators start datasets (and become their coordinators, ``corpus.datasets``)."""
    return is_coordinator(user)


def check_create(user, model: type[Model], data: dict) -> None:
    """Raise PermissionDenied unless ``user`` may create a ``model`` from these validated fields.

    Creating something inside a parent needs the right to change the parent, except that
    annotators start their own pyramids and peer annotations in topics they are assigned to.
    """
    if user.is_superuser:
        return
    if model is Dataset:
        allowed = may_create_dataset(user)
    elif model is Topic:
        allowed = can_change(user, data["dataset"])
    elif model in (ReferenceSummary, PeerSummary, Assignment):
        allowed = can_change(user, data["topic"])
    elif model is Pyramid:
        topic = data["topic"]
        allowed = can_change(user, topic) or Assignment.objects.filter(annotator=user, topic=topic, task=BUILD).exists()
    elif model is SCU:
        allowed = can_change(user, data["pyramid"])
    elif model is Contributor:
        allowed = can_change(user, data["scu"])
    elif model is PeerAnnotation:
        topic = data["peer"].topic
        allowed = can_change(user, topic) or Assignment.objects.filter(annotator=user, topic=topic, task=ANNOTATE).exists()
    elif model is PeerMatch:
        allowed = can_change(user, data["annotation"])
    elif model is LightweightPyramid:
        allowed = can_change(user, data["dataset"])
    else:
        allowed = False
    if not allowed:
        raise PermissionDenied("You may not create this here.")


def check_destroy(user, obj: Model) -> None:
    """Deleting a pyramid deletes every peer annotation against it: annotators may delete their
    pyramid only while nobody else has annotated against it (coordinators may always)."""
    if isinstance(obj, Pyramid) and not user.is_superuser and not Pyramid.objects.filter(_coordinated(RULES[Pyramid], user), pk=obj.pk).exists():
        if obj.annotations.exclude(annotator=user).exists():
            raise PermissionDenied("Other annotators' peer annotations use this pyramid: only a coordinator may delete it.")


class CanChange(permissions.IsAuthenticated):
    """Reads of visible objects are allowed (querysets are already filtered); writes need ``can_change``."""

    def has_object_permission(self, request, view, obj):
        if request.method in permissions.SAFE_METHODS:
            return True
        if not can_change(request.user, obj):
            return False
        if request.method == "DELETE":
            check_destroy(request.user, obj)
        return True


class IsCoordinatorOf(permissions.IsAuthenticated):
    """Dataset-wide figures (scores, agreement) compare annotators: coordinators and superusers only."""

    def has_object_permission(self, request, view, obj):
        return can_change(request.user, obj)
