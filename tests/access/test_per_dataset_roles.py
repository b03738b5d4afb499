"""Every role is held per dataset: coordinating one dataset gives no right in another.

- Every view of the URLconf that takes an object of a dataset (found by walking
  ``get_resolver()``, so a new view is covered without editing this file) answers 403 or 404 to a
  coordinator of another dataset, for every method, while the dataset's own coordinator gets
  through (a 404 there would mean the test built a wrong URL and proves nothing); on an
  annotator's own work (``/assignments/{id}/...``) the annotator is the one who gets through.
- A dataset's coordinators are chosen among the coordinators (``rules.coordinator_candidates``):
  no annotator, inactive account or imported annotator identity becomes one through the API.
"""

import re

import pytest
from django.contrib.auth.models import User
from django.db import transaction
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, reverse

from annotation.corpus.roles import COORDINATOR, IMPORTED_ANNOTATOR, role_group
from annotation.lightweight.models import LightweightPyramid, LiteStatement, LiteTask
from annotation.peers.models import PeerAnnotation
from annotation.pyramids.models import ContributorPart, Pyramid

from tests.api.world import client_for

pytestmark = pytest.mark.django_db

SKIPPED = re.compile(
    r"^(admin/|accounts/|api/auth/token/|api/schema/|api/docs/|healthz|favicon"
    r"|lightweight/\^crowd/|api/\^crowd/)"
)
METHODS = ("get", "post", "patch", "delete")
DENIED = {403, 404, 405}


def routes():
    """(path pattern, name with namespaces, its keyword names) of every view taking an argument."""

    def walk(resolver, prefix, namespace):
        for entry in resolver.url_patterns:
            if isinstance(entry, URLResolver):
                inner = namespace + ([entry.namespace] if entry.namespace else [])
                yield from walk(entry, prefix + str(entry.pattern), inner)
            elif isinstance(entry, URLPattern) and entry.name:
                path = prefix + str(entry.pattern)
                names = {a or b for a, b in re.findall(r"<(?:\w+:)?(\w+)>|\(\?P<(\w+)>", path)}
                names.discard("format")
                if names and not SKIPPED.match(path):
                    yield path, ":".join([*namespace, entry.name]), names

    return sorted(set((p, n, frozenset(k)) for p, n, k in walk(get_resolver(), "", [])))


@pytest.fixture
def objects(world):
    """The API world's dataset D1 with a second finished pyramid and a crowd run with a statement
    and a task; ``other_coord`` (coordinator role) coordinates D2 only."""
    w = world
    w.users["other_coord"].groups.add(role_group(COORDINATOR))
    w.users["coord"].groups.add(role_group(COORDINATOR))
    second = Pyramid.objects.create(topic=w.t1, creator=w.users["bob"], status=Pyramid.Status.DONE)
    second.references.set(w.refs.values())
    run = LightweightPyramid.objects.create(dataset=w.d1, name="crowd")
    statement = LiteStatement.objects.create(
        pyramid=run, topic=w.t1, external_id="q1", text="Alpha.", reference=w.refs["A"]
    )
    task = LiteTask.objects.create(pyramid=run, topic=w.t1, peer=w.peer1, key="q1", statement_ids=[statement.pk])
    PeerAnnotation.objects.create(
        peer=w.peer1, pyramid=w.pyramid, annotator=w.users["carol"], status=PeerAnnotation.Status.DONE
    )
    w.second, w.run, w.statement, w.task = second, run, statement, task
    return w


PK_BY_PREFIX = [  # the object a route's ``pk`` names, by the route's start
    ("api/^datasets/", "d1"),
    ("api/datasets/", "d1"),
    ("api/^topics/", "t1"),
    ("api/^references/", "ref"),
    ("api/^peers/", "peer1"),
    ("api/^pyramids/", "pyramid"),
    ("api/^scus/", "scu1"),
    ("api/^contributors/", "contributor"),
    ("api/^annotations/", "annotation"),
    ("api/^matches/", "match"),
    ("api/^assignments/", "annotate_assignment"),
    ("api/^lightweight/", "run"),
    ("api/^lite-statements/", "statement"),
    ("api/^lite-tasks/", "task"),
    ("lightweight/", "run"),
    ("assignments/", "annotate_assignment"),
    ("pyramids/", "pyramid"),
    ("annotations/", "annotation"),
]


def arguments(w, path: str, names) -> dict:
    objects = {
        "d1": w.d1,
        "t1": w.t1,
        "ref": w.refs["A"],
        "peer1": w.peer1,
        "pyramid": w.pyramid,
        "scu1": w.scu1,
        "contributor": w.contributor,
        "annotation": w.annotation,
        "match": w.match,
        "run": w.run,
        "statement": w.statement,
        "task": w.task,
        "annotate_assignment": w.t1.assignments.get(annotator=w.users["alice"], task="annotate_peers"),
    }
    values = {
        "dataset_id": w.d1.pk,
        "assignment_id": w.assignment.pk,
        "topic": w.t1.external_id,
        "topic_id": w.t1.pk,
        "pyramid_id": w.pyramid.pk,
        "a": w.pyramid.pk,
        "b": w.second.pk,
        "kind": "reference",
        "summary_id": w.refs["A"].pk,
        "fmt": "csv",
        "chart": "systems",
        "action": "close",
        "part_id": ContributorPart.objects.filter(contributor=w.contributor).first().pk,
        "peer": w.peer1.external_id if path.startswith("datasets/") else w.peer1.pk,
    }
    if "pk" in names:
        values["pk"] = next(objects[key] for prefix, key in PK_BY_PREFIX if path.startswith(prefix)).pk
    return {name: values[name] for name in names}


class Undone(Exception):
    pass


def answers(user, url: str) -> dict[str, int]:
    """The status of each method's request, each rolled back (a coordinator's DELETE must not take
    the objects later URLs need)."""
    client = Client()
    client.force_login(user)
    api = client_for(user)
    out = {}
    for method in METHODS:
        try:
            with transaction.atomic():
                if url.startswith("/api/"):
                    out[method] = getattr(api, method)(url, {}, format="json").status_code
                else:
                    out[method] = getattr(client, method)(url).status_code
                raise Undone()
        except Undone:
            pass
    return out


def test_every_role_checked_view_refuses_a_coordinator_of_another_dataset(objects):
    checked, leaks, unreached = [], [], []
    for path, name, names in routes():
        url = reverse(name, kwargs=arguments(objects, path, names))
        theirs = answers(objects.users["other_coord"], url)
        if any(status not in DENIED for status in theirs.values()):
            leaks.append((url, theirs))
        ours = answers(objects.users["coord"], url)
        if all(status in DENIED for status in ours.values()):  # an annotator's own work: its annotator gets through
            ours = answers(objects.users["alice"], url)
        if all(status in DENIED for status in ours.values()):
            unreached.append((url, ours))
        checked.append(url)
    assert len(checked) > 60, checked
    assert leaks == [], leaks
    # the dataset's own coordinator must get through, else the URL proves nothing
    assert unreached == [], "\n".join(map(str, unreached))


def test_the_adjudication_pages_refuse_a_coordinator_of_another_dataset(objects):
    """The adjudication pages say 404 to anyone but the dataset's coordinators (docs/coordinator.md)."""
    for name, kwargs in [
        ("dashboards:adjudicate", {"topic": "T1", "peer": "1", "pyramid_id": objects.pyramid.pk}),
        ("dashboards:adjudicate_pyramids", {"topic": "T1", "a": objects.pyramid.pk, "b": objects.second.pk}),
    ]:
        url = reverse(name, kwargs={"dataset_id": objects.d1.pk, **kwargs})
        assert set(answers(objects.users["other_coord"], url).values()) <= {404, 405}, url


@pytest.mark.parametrize(
    "who, accepted",
    [("annotator", False), ("inactive coordinator", False), ("imported identity", False), ("coordinator", True)],
)
def test_only_coordinators_are_named_a_datasets_coordinators(objects, who, accepted):
    candidate = User.objects.create_user(f"new-{who.replace(' ', '-')}")
    if who == "annotator":
        pass
    elif who == "inactive coordinator":
        candidate.groups.add(role_group(COORDINATOR))
        candidate.is_active = False
        candidate.save()
    elif who == "imported identity":
        candidate.is_active = False
        candidate.set_unusable_password()
        candidate.save()
        candidate.groups.add(role_group(IMPORTED_ANNOTATOR))
    else:
        candidate.groups.add(role_group(COORDINATOR))
    api = client_for(objects.users["coord"])
    url = reverse("api:dataset-detail", args=[objects.d1.pk])
    answer = api.patch(url, {"coordinators": [objects.users["coord"].pk, candidate.pk]}, format="json")
    assert answer.status_code == (200 if accepted else 400), answer.content
    assert objects.d1.coordinators.filter(pk=candidate.pk).exists() is accepted
    # creating a dataset naming them is refused the same way
    body = {"name": f"New {who}", "coordinators": [candidate.pk]}
    created = api.post(reverse("api:dataset-list"), body, format="json")
    assert created.status_code == (201 if accepted else 400), created.content


def test_existing_coordinators_stay_when_the_list_is_sent_again(objects):
    """A coordinator made before the rule (an annotator coordinating D1) is kept by a PATCH that
    sends the list back unchanged, and can be removed."""
    alice = objects.users["alice"]
    objects.d1.coordinators.add(alice)
    api = client_for(objects.users["coord"])
    url = reverse("api:dataset-detail", args=[objects.d1.pk])
    assert api.patch(url, {"coordinators": [objects.users["coord"].pk, alice.pk]}, format="json").status_code == 200
    assert api.patch(url, {"coordinators": [objects.users["coord"].pk]}, format="json").status_code == 200
    assert not objects.d1.coordinators.filter(pk=alice.pk).exists()
