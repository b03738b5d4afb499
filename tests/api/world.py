"""A small world with one user of every role, and API clients logged in as each of them.

Dataset D1 (coordinated by ``coord``) has topic T1 with references A, B and peers 1, 2.
- alice: build_pyramid and annotate_peers on T1; owns the (finished) pyramid (SCU 1 "Alpha" from
  A, SCU 2 "Zeta" from B) and the annotation of peer 1 (one match, of SCU 1);
- bob: build_pyramid on T1 only (must never see alice's pyramid or annotation);
- carol: annotate_peers on T1 only (may read the topic's finished pyramids, never alice's annotation);
- other_coord coordinates dataset D2 only; admin is a superuser.
"""

from types import SimpleNamespace

import pytest
from django.contrib.auth.models import User
from rest_framework.test import APIClient

from annotation.corpus.models import Assignment, Dataset, PeerSummary
from annotation.peers.editing import add_match
from annotation.peers.models import PeerAnnotation
from annotation.pyramids.editing import add_contributor
from annotation.pyramids.models import SCU, Pyramid

from tests.foundation.factories import topic

ROLES = ("anon", "alice", "bob", "carol", "coord", "other_coord", "admin")


@pytest.fixture
def world(db):
    users = {name: User.objects.create_user(name) for name in ROLES if name not in ("anon", "admin")}
    users["admin"] = User.objects.create_superuser("admin", email=None, password=None)
    t1, refs = topic("T1", "D1", A="Alpha beta gamma.", B="Delta epsilon zeta.")
    d1 = t1.dataset
    d1.coordinators.add(users["coord"])
    d2 = Dataset.objects.create(name="D2")
    d2.coordinators.add(users["other_coord"])
    peer1 = PeerSummary.objects.create(topic=t1, external_id="1", text="Alpha is here, zeta too.")
    peer2 = PeerSummary.objects.create(topic=t1, external_id="2", text="Nothing relevant.")
    for name, task in [
        ("alice", "build_pyramid"),
        ("alice", "annotate_peers"),
        ("bob", "build_pyramid"),
        ("carol", "annotate_peers"),
    ]:
        Assignment.objects.create(topic=t1, annotator=users[name], task=task, created_by=users["coord"])
    pyramid = Pyramid.objects.create(topic=t1, creator=users["alice"], status=Pyramid.Status.DONE)
    pyramid.references.set(refs.values())
    scu1 = SCU.objects.create(pyramid=pyramid, uid=1, label="Alpha")
    scu2 = SCU.objects.create(pyramid=pyramid, uid=2, label="Zeta")
    contributor = add_contributor(scu1, refs["A"], [(0, 5)])
    zeta = add_contributor(scu2, refs["B"], [(14, 18)])
    annotation = PeerAnnotation.objects.create(
        peer=peer1, pyramid=pyramid, annotator=users["alice"], status=PeerAnnotation.Status.DONE
    )
    match = add_match(annotation, scu1, [(0, 5)])
    return SimpleNamespace(
        users=users,
        d1=d1,
        d2=d2,
        t1=t1,
        refs=refs,
        peer1=peer1,
        peer2=peer2,
        pyramid=pyramid,
        scu1=scu1,
        scu2=scu2,
        contributor=contributor,
        zeta=zeta,
        annotation=annotation,
        match=match,
        assignment=Assignment.objects.get(annotator=users["alice"], task="build_pyramid"),
    )


def client_for(user, if_match: str | None = "*") -> APIClient:
    """An API client; writes carry ``If-Match: *`` unless told otherwise (versions: test_versions.py)."""
    client = APIClient()
    if if_match is not None:
        client.credentials(HTTP_IF_MATCH=if_match)
    if user is not None:
        client.force_authenticate(user)
    return client


@pytest.fixture
def as_user(world):
    """as_user("alice") -> an API client authenticated as alice (``"anon"``: not authenticated)."""
    return lambda role: client_for(world.users.get(role))
