"""Every endpoint x every role: the status code of each operation (table-driven).

Columns follow ``ROLES``: anon, alice (assigned, owns the objects), bob (pyramid builder on the
topic), carol (peer annotator on the topic), coord (the dataset's coordinator), other_coord
(coordinator of another dataset), admin. Objects you may not see are 404 (or an unknown id,
400, when named in a request body); writes you may not do are 403.
"""

import pytest

from annotation.corpus.models import Assignment, Dataset, PeerSummary, ReferenceSummary, Topic
from annotation.peers.models import PeerAnnotation, PeerMatch
from annotation.pyramids.models import SCU, Contributor, Pyramid

from tests.api.world import ROLES

# endpoint -> (model, target object in the world, create payload, patch payload or None)
ENDPOINTS = {
    "datasets": (Dataset, "d1", lambda w: {"name": "New"}, {"description": "changed"}),
    "topics": (Topic, "t1", lambda w: {"dataset": w.d1.pk, "external_id": "T2"}, {"title": "changed"}),
    "references": (
        ReferenceSummary,
        "ref_a",
        lambda w: {"topic": w.t1.pk, "external_id": "C", "text": "Gamma."},
        {"external_id": "Z"},
    ),
    "peers": (
        PeerSummary,
        "peer1",
        lambda w: {"topic": w.t1.pk, "external_id": "3", "text": "Peer."},
        {"system_id": "sys"},
    ),
    "pyramids": (
        Pyramid,
        "pyramid",
        lambda w: {"topic": w.t1.pk, "references": [r.pk for r in w.refs.values()]},
        {"status": "in_progress"},
    ),
    "scus": (
        SCU,
        "scu2",
        lambda w: {
            "pyramid": w.pyramid.pk,
            "label": "New",
            "reference": w.refs["A"].pk,
            "parts": [{"start": 6, "end": 10}],
        },
        {"label": "relabelled"},
    ),
    "contributors": (
        Contributor,
        "zeta",
        lambda w: {"scu": w.scu2.pk, "reference": w.refs["A"].pk, "parts": [{"start": 11, "end": 16}]},
        {"comment": "why"},
    ),
    "annotations": (
        PeerAnnotation,
        "annotation",
        lambda w: {"peer": w.peer2.pk, "pyramid": w.pyramid.pk},
        {"status": "draft"},
    ),  # the fixture's annotation is done
    "matches": (
        PeerMatch,
        "match",
        lambda w: {"annotation": w.annotation.pk, "scu": w.scu2.pk, "parts": [{"start": 19, "end": 23}]},
        {"scu": None},
    ),
    "assignments": (
        Assignment,
        "assignment",
        lambda w: {"topic": w.t1.pk, "annotator": w.users["bob"].pk, "task": "annotate_peers"},
        {"status": "done"},
    ),
}

#                 anon alice bob  carol coord other admin
CORPUS_READ = "401  200  200  200   200   404   200"
CORPUS_WRITE = "401  403  403  403   200   404   200"
PYRAMID_READ = "401  200  404  200   200   404   200"
PYRAMID_WRITE = "401  200  404  403   200   404   200"
OWN_READ = "401  200  404  404   200   404   200"
OWN_WRITE = "401  200  404  404   200   404   200"
ASSIGN_WRITE = "401  403  404  404   200   404   200"

EXPECTED = {
    # endpoint: (retrieve, update, delete, create)
    "datasets": (CORPUS_READ, CORPUS_WRITE, CORPUS_WRITE, "401 403 403 403 201 201 201"),
    "topics": (CORPUS_READ, CORPUS_WRITE, CORPUS_WRITE, "401 403 403 403 201 400 201"),
    "references": (CORPUS_READ, CORPUS_WRITE, CORPUS_WRITE, "401 403 403 403 201 400 201"),
    "peers": (CORPUS_READ, CORPUS_WRITE, CORPUS_WRITE, "401 403 403 403 201 400 201"),
    "pyramids": (PYRAMID_READ, PYRAMID_WRITE, PYRAMID_WRITE, "401 201 201 403 201 400 201"),
    "scus": (PYRAMID_READ, PYRAMID_WRITE, PYRAMID_WRITE, "401 201 400 403 201 400 201"),
    "contributors": (PYRAMID_READ, PYRAMID_WRITE, PYRAMID_WRITE, "401 201 400 403 201 400 201"),
    "annotations": (OWN_READ, OWN_WRITE, OWN_WRITE, "401 201 400 201 201 400 201"),
    "matches": (OWN_READ, OWN_WRITE, OWN_WRITE, "401 201 400 400 201 400 201"),
    "assignments": (OWN_READ, ASSIGN_WRITE, ASSIGN_WRITE, "401 403 403 403 201 400 201"),
}

ACTIONS = {
    # path template (target id filled in) -> codes
    "/api/pyramids/{pyramid}/full/": PYRAMID_READ,
    "/api/pyramids/{pyramid}/export/?format=json": PYRAMID_READ,
    "/api/annotations/{annotation}/full/": OWN_READ,
    "/api/annotations/{annotation}/export/?format=json": OWN_READ,
    "/api/datasets/{d1}/scores/": "401 403 403 403 200 404 200",
    "/api/datasets/{d1}/scores/?format=csv": "401 403 403 403 200 404 200",
    "/api/datasets/{d1}/agreement/": "401 403 403 403 200 404 200",
}


def codes(row: str) -> dict[str, int]:
    return dict(zip(ROLES, map(int, row.split()), strict=True))


def cases(operation: int):
    for endpoint, expected in EXPECTED.items():
        if expected[operation] is not None:
            for role, code in codes(expected[operation]).items():
                yield pytest.param(endpoint, role, code, id=f"{endpoint}-{role}")


def target(world, name):
    return world.refs["A"] if name == "ref_a" else getattr(world, name)


@pytest.mark.parametrize("endpoint,role,code", list(cases(0)))
def test_retrieve_and_list(world, as_user, endpoint, role, code):
    obj = target(world, ENDPOINTS[endpoint][1])
    client = as_user(role)
    assert client.get(f"/api/{endpoint}/{obj.pk}/").status_code == code
    listing = client.get(f"/api/{endpoint}/")
    if role == "anon":
        assert listing.status_code == 401
    else:
        assert listing.status_code == 200
        listed = {item["id"] for item in listing.json()["results"]}
        assert (obj.pk in listed) == (code == 200), "lists and retrieval must agree on what is visible"


@pytest.mark.parametrize("endpoint,role,code", list(cases(1)))
def test_update(world, as_user, endpoint, role, code):
    model, name, _, patch = ENDPOINTS[endpoint]
    obj = target(world, name)
    response = as_user(role).patch(f"/api/{endpoint}/{obj.pk}/", patch, format="json")
    assert response.status_code == code, response.content
    field, value = next(iter(patch.items()))
    assert (getattr(model.objects.get(pk=obj.pk), field) == value) == (code == 200)


@pytest.mark.parametrize("endpoint,role,code", list(cases(2)))
def test_delete(world, as_user, endpoint, role, code):
    model, name, _, _ = ENDPOINTS[endpoint]
    obj = target(world, name)
    expected = 204 if code == 200 else code
    assert as_user(role).delete(f"/api/{endpoint}/{obj.pk}/").status_code == expected
    assert model.objects.filter(pk=obj.pk).exists() == (expected != 204)


@pytest.mark.parametrize("endpoint,role,code", list(cases(3)))
def test_create(world, as_user, endpoint, role, code):
    model, _, payload, _ = ENDPOINTS[endpoint]
    before = model.objects.count()
    response = as_user(role).post(f"/api/{endpoint}/", payload(world), format="json")
    assert response.status_code == code, response.content
    assert model.objects.count() == before + (code == 201)


@pytest.mark.parametrize(
    "path,role,code",
    [
        pytest.param(path, role, code, id=f"{path}-{role}")
        for path, row in ACTIONS.items()
        for role, code in codes(row).items()
    ],
)
def test_actions(world, as_user, path, role, code):
    url = path.format(pyramid=world.pyramid.pk, annotation=world.annotation.pk, d1=world.d1.pk)
    assert as_user(role).get(url).status_code == code


def test_put_is_not_offered(world, as_user):
    """Where an object lives is fixed at creation: updates are PATCH."""
    for endpoint, (_, name, _, _) in ENDPOINTS.items():
        obj = target(world, name)
        assert as_user("admin").put(f"/api/{endpoint}/{obj.pk}/", {}, format="json").status_code == 405, endpoint


def test_unassigned_annotator_sees_nothing(world, as_user):
    from django.contrib.auth.models import User

    from tests.api.world import client_for

    client = client_for(User.objects.create_user("dave"))
    for endpoint in ENDPOINTS:
        assert client.get(f"/api/{endpoint}/").json()["count"] == 0, endpoint


def test_annotation_is_blind(world, as_user):
    """Nobody sees a pyramid being built by someone else; peer annotators see finished pyramids and
    the pyramids of their own annotations, never another annotator's annotation."""
    from annotation.corpus.models import Assignment

    bobs = Pyramid.objects.create(topic=world.t1, creator=world.users["bob"], status=Pyramid.Status.IN_PROGRESS)
    visible = lambda role: {p["id"] for p in as_user(role).get("/api/pyramids/").json()["results"]}  # noqa: E731  (a one-line helper of this test)
    assert visible("bob") == {bobs.pk}, "a builder sees only his own pyramid"
    assert visible("alice") == {world.pyramid.pk}, "alice also annotates peers, but bob's pyramid is unfinished"
    assert visible("carol") == {world.pyramid.pk}
    carols = PeerAnnotation.objects.create(peer=world.peer2, pyramid=bobs, annotator=world.users["carol"])
    assert visible("carol") == {world.pyramid.pk, bobs.pk}, "the pyramid her own annotation is against"
    assert as_user("carol").patch(f"/api/pyramids/{bobs.pk}/", {"status": "done"}, format="json").status_code == 403
    assert {a["id"] for a in as_user("carol").get("/api/annotations/").json()["results"]} == {carols.pk}
    Assignment.objects.filter(annotator=world.users["carol"]).delete()
    assert visible("carol") == set(), "without the assignment, nothing"
    bobs.status = Pyramid.Status.DONE
    bobs.save()
    assert visible("alice") == {world.pyramid.pk, bobs.pk}


def test_an_annotator_cannot_delete_a_pyramid_others_annotate_against(world, as_user):
    PeerAnnotation.objects.create(peer=world.peer2, pyramid=world.pyramid, annotator=world.users["carol"])
    response = as_user("alice").delete(f"/api/pyramids/{world.pyramid.pk}/")
    assert response.status_code == 403 and "only a coordinator" in response.json()["detail"]
    assert as_user("coord").delete(f"/api/pyramids/{world.pyramid.pk}/").status_code == 204


def test_rights_follow_assignments_and_coordination_from_one_request_to_the_next(world, as_user):
    """The rules' queries are kept per process and user (``rules._ruled``: composing them was a fifth
    of a write's CPU); what they find is read when they run, so a user given or losing a dataset or
    an assignment is answered accordingly at the next request, by the related ids a body names and
    by the write checks alike."""
    from annotation.access.rules import can_change

    carol, match = (
        world.users["carol"],
        {"annotation": world.annotation.pk, "scu": world.scu2.pk, "parts": [{"start": 19, "end": 23}]},
    )
    assert (
        as_user("carol").post("/api/matches/", match, format="json").status_code == 400
    )  # alice's annotation: no such id
    assert not can_change(carol, world.annotation)
    world.d1.coordinators.add(carol)
    assert as_user("carol").post("/api/matches/", match, format="json").status_code == 201
    assert can_change(carol, world.annotation)
    world.d1.coordinators.remove(carol)
    assert as_user("carol").patch(f"/api/matches/{world.match.pk}/", {"scu": None}, format="json").status_code == 404
    assert not can_change(carol, world.annotation)
    # bob builds pyramids in T1: his own pyramid's SCUs are his to change until his assignment goes.
    bob = world.users["bob"]
    own = SCU.objects.create(pyramid=Pyramid.objects.create(topic=world.t1, creator=bob), uid=1, label="Own")
    assert can_change(bob, own) and not can_change(bob, world.scu1)
    Assignment.objects.filter(annotator=bob).delete()
    assert not can_change(bob, own)
