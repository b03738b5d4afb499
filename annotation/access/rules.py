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

The rule is written here once; each concept registers how its models reach their topic, dataset
and owner, and what annotators may do with them (``register``, ``register_kind``, ``extend_read``,
``refuse_destroy``: ``pyramids.access``, ``peers.access``, ``lightweight.access``, imported when the
app is ready). This module is in the access layer, below those concepts, and names none of their models.

Every rule is a ``Q`` filter, used twice: querysets are filtered with the read filter (so an
object you may not see is a 404, its existence never leaks) and a write is allowed only if the
object passes the write filter (otherwise 403).
"""

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache, lru_cache

from django.contrib.auth import get_user_model
from django.db.models import Manager, Model, Q, QuerySet
from django.db.models.sql import Query
from django.shortcuts import get_object_or_404
from rest_framework import permissions
from rest_framework.exceptions import PermissionDenied

from annotation.api import access
from annotation.corpus.models import Assignment, Dataset, PeerSummary, ReferenceSummary, Topic
from annotation.corpus.roles import COORDINATOR
from annotation.jobs import framework_internals

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


# The models of this layer's concept (the corpus); each concept above registers its own
# (``register``: ``pyramids.access``, ``peers.access``, ``lightweight.access``, imported when the app is ready).
RULES: dict[type[Model], Rule] = {
    Dataset: Rule("dataset", None, "pk"),
    Topic: Rule("corpus", "pk", "dataset"),
    ReferenceSummary: Rule("corpus", "topic", "topic__dataset"),
    PeerSummary: Rule("corpus", "topic", "topic__dataset"),
    Assignment: Rule("assignment", "topic", "topic__dataset", owner="annotator"),
}
# kind -> (rule, user) -> what annotators may read (besides the extensions below), and write.
ANNOTATOR_READS: dict[str, Callable[[Rule, object], Q]] = {}
ANNOTATOR_WRITES: dict[str, Callable[[Rule, object], Q]] = {}
# kind -> further reads a concept above grants (a peer annotator reads the pyramids their annotations use).
READ_EXTENSIONS: dict[str, list[Callable[[Rule, object], Q]]] = {}
# model -> (user, validated fields) -> may this user create one there (superusers always may).
CREATES: dict[type[Model], Callable[[object, dict], bool]] = {}
# model -> (user, object) -> raise PermissionDenied if this user may not delete it (after ``can_change``).
DESTROYS: dict[type[Model], list[Callable[[object, Model], None]]] = {}


def register(model: type[Model], rule: Rule, *, create: Callable[[object, dict], bool] | None = None) -> None:
    """The access rule of a concept's model: how it reaches its topic, dataset and owner, and who
    may create one through the API (None: nobody but superusers). Registered by the concept's
    package, which is above this layer."""
    RULES[model] = rule
    if create is not None:
        CREATES[model] = create
    _ruled.cache_clear()


def register_kind(kind: str, *, read: Callable[[Rule, object], Q], write: Callable[[Rule, object], Q]) -> None:
    """What annotators may read and write of the models of ``kind`` (beyond coordinating)."""
    ANNOTATOR_READS[kind], ANNOTATOR_WRITES[kind] = read, write
    _ruled.cache_clear()


def extend_read(kind: str, read: Callable[[Rule, object], Q]) -> None:
    """Annotators also read the objects of ``kind`` that ``read`` keeps (a concept above granting it)."""
    READ_EXTENSIONS.setdefault(kind, []).append(read)
    _ruled.cache_clear()


def refuse_destroy(model: type[Model], check: Callable[[object, Model], None]) -> None:
    """``check(user, obj)`` raises PermissionDenied when deleting ``obj`` would take others' work with it."""
    DESTROYS.setdefault(model, []).append(check)


def _rule(model: type[Model]) -> Rule:
    try:
        return RULES[model]
    except KeyError:
        raise LookupError(
            f"no access rule is registered for {model.__name__}: its concept registers it with "
            "annotation.access.rules.register when the app is ready (annotation.apps)"
        ) from None


def at(path: str, lookup: str) -> str:
    """``lookup`` on the object ``path`` leads to (``""``: the model itself)."""
    return f"{path}__{lookup}" if path else lookup


def assigned_topics(user, task=None) -> QuerySet:
    assignments = Assignment.objects.filter(annotator=user)
    return (assignments.filter(task=task) if task else assignments).values("topic_id")


def _coordinated(rule: Rule, user) -> Q:
    return Q(**{f"{rule.dataset}__in": Dataset.objects.filter(coordinators=user).values("pk")})


def in_topics(rule: Rule, user, task=None) -> Q:
    """Objects in the topics ``user`` has an assignment for (of ``task``, when given)."""
    return Q(**{f"{rule.topic}__in": assigned_topics(user, task)})


def owned(rule: Rule, user) -> Q:
    return Q(**{rule.owner: user})


def read_filter(model: type[Model], user) -> Q:
    rule = _rule(model)
    if rule.kind == "dataset":
        annotator = Q(pk__in=Topic.objects.filter(pk__in=assigned_topics(user)).values("dataset_id"))
    elif rule.kind == "corpus":
        annotator = in_topics(rule, user)
    elif rule.kind == "assignment":
        annotator = owned(rule, user)
    elif rule.kind == "coordinated":
        annotator = NOTHING
    else:
        annotator = ANNOTATOR_READS[rule.kind](rule, user)
    for extension in READ_EXTENSIONS.get(rule.kind, ()):
        annotator |= extension(rule, user)
    return _coordinated(rule, user) | annotator


def write_filter(model: type[Model], user) -> Q:
    rule = _rule(model)
    writes = ANNOTATOR_WRITES.get(rule.kind)
    annotator = writes(rule, user) if writes else NOTHING
    return _coordinated(rule, user) | annotator


@lru_cache(maxsize=256)
def _ruled(model: type[Model], user_id: int) -> Query:
    """All ``model`` objects this (not super) user may see, as a query kept per process and copied
    for each use (``Query.chain``; never run itself). The write check is ``can_change``'s own.

    A rule is a few nested subqueries over assignments and coordinated datasets: Django composing
    them anew (lookups, joins) took a fifth of the app's CPU of every write (two related ids to look
    up and one write check per request: docs/performance.md). The query depends on nothing but the
    model and the user's id (who is assigned or coordinates what is read by the database when it
    runs), so it is built once per user and model."""
    return model._default_manager.filter(read_filter(model, user_id)).query


def _ruled_objects(model: type[Model], user) -> QuerySet:
    """A fresh queryset of ``_ruled``'s objects (its own copy of the kept query)."""
    return framework_internals.queryset_of(model, _ruled(model, user.pk))


@lru_cache(maxsize=256)
def _composed(model: type[Model], compose: Callable[[QuerySet], QuerySet], user_id: int, superuser: bool) -> Query:
    """``compose`` applied to the objects this user may see, kept per process like ``_ruled``."""
    if superuser:
        objects = model._default_manager.all()
    else:
        objects = framework_internals.queryset_of(model, _ruled(model, user_id))
    return compose(objects).query


def visible_composed(user, model: type[Model], compose: Callable[[QuerySet], QuerySet]) -> QuerySet:
    """``compose(visible(user, model's objects))``, its query composed once per user and kept (a
    fresh copy each time): for reads that filter and annotate the visible objects further on every
    request (a ``full/`` read's counted annotations took ~0.9 ms to compose). ``compose`` must be
    a module-level function depending on nothing but the queryset it is given (its prefetches are
    not kept: add them to the result)."""
    if not user.is_authenticated:
        return model._default_manager.none()
    return framework_internals.queryset_of(model, _composed(model, compose, user.pk, user.is_superuser))


def visible(user, queryset: QuerySet | Manager) -> QuerySet:
    """The objects of ``queryset`` this user may see (all of them for superusers). A model's default
    manager (what the serializers' related fields look ids up in) costs no composing (``_ruled``)."""
    if not user.is_authenticated:
        return queryset.none()
    if user.is_superuser:
        return queryset
    if queryset is queryset.model._default_manager:
        return _ruled_objects(queryset.model, user)
    return queryset.filter(read_filter(queryset.model, user))


def can_change(user, obj: Model) -> bool:
    """Whether ``user`` may change ``obj``: one statement composed once per model and process
    (``framework_internals.kept_rows``; composing it took 1 ms of CPU of every write and of every
    document read, which says whether its reader may edit it)."""
    if user.is_superuser:
        return True
    if user.pk is None or obj.pk is None:
        return False
    return bool(framework_internals.kept_rows(_changeable(type(obj)), user=user.pk, pk=obj.pk))


@cache
def _changeable(model: type[Model]) -> Callable[[int, int], QuerySet]:
    """``can_change``'s statement for ``model``: object ``pk`` if ``user`` may change it."""

    def changeable(user: int, pk: int) -> QuerySet:
        return model._default_manager.filter(write_filter(model, user), pk=pk).values_list("pk")[:1]

    changeable.__name__ = f"changeable_{model.__name__}"
    return changeable


def coordinated_datasets(user) -> QuerySet:
    """The datasets ``user`` coordinates: every dataset for a superuser, none for an anonymous or
    inactive account. Every page that lists "your datasets" (the start page, the dashboards, the
    crowd runs) asks this, so a list never offers a dataset that ``coordinates`` then refuses."""
    if not (user.is_authenticated and user.is_active):
        return Dataset.objects.none()
    return Dataset.objects.all() if user.is_superuser else Dataset.objects.filter(coordinators=user)


def is_coordinator(user) -> bool:
    """Coordinators: members of the coordinator role, and anyone who coordinates a dataset."""
    return bool(
        user.is_authenticated
        and (user.is_superuser or user.groups.filter(name=COORDINATOR).exists() or coordinated_datasets(user).exists())
    )


def coordinates(user, dataset: Dataset) -> bool:
    """Is ``user`` a coordinator of this ``dataset`` (or a superuser)? Every role check about a
    dataset asks this: coordinating another dataset, or the ``coordinator`` role alone, gives no
    right in this one."""
    return bool(
        user.is_authenticated
        and user.is_active
        and (user.is_superuser or dataset.coordinators.filter(pk=user.pk).exists())
    )


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
    annotators start their own pyramids and peer annotations in topics they are assigned to
    (each concept's ``create`` rule, ``register``).
    """
    if user.is_superuser:
        return
    if model is Dataset:
        allowed = may_create_dataset(user)
    elif model is Topic:
        allowed = can_change(user, data["dataset"])
    elif model in (ReferenceSummary, PeerSummary, Assignment):
        allowed = can_change(user, data["topic"])
    elif model in CREATES:
        allowed = CREATES[model](user, data)
    else:
        allowed = False
    if not allowed:
        raise PermissionDenied("You may not create this here.")


def check_destroy(user, obj: Model) -> None:
    """Deleting may take other people's work with it: the checks the object's concepts registered
    (``refuse_destroy``; coordinators of its dataset may always)."""
    checks = DESTROYS.get(type(obj), ())
    if (
        checks
        and not user.is_superuser
        and not type(obj).objects.filter(_coordinated(_rule(type(obj)), user), pk=obj.pk).exists()
    ):
        for check in checks:
            check(user, obj)


class IsCoordinatorOf(permissions.IsAuthenticated):
    """Dataset-wide figures (scores, agreement) compare annotators: coordinators and superusers only."""

    def has_object_permission(self, request, view, obj):
        return can_change(request.user, obj)


# The API's base classes and the corpus's REST code, below this rule, apply it through this registration.
access.register(
    access.Rule(
        visible=visible,
        visible_composed=visible_composed,
        can_change=can_change,
        check_create=check_create,
        check_destroy=check_destroy,
        governs=RULES.__contains__,
        coordinator_candidates=coordinator_candidates,
    )
)
