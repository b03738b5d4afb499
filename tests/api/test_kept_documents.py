"""The SCUs of ``full/`` documents kept per state of the pyramid (``scu_documents.pyramid_scus``):
every change that alters them is served at once, whatever path made it, and what a rolled-back
transaction read is never served.

Transactional tests: the SCUs are kept only from reads outside a transaction (committed rows), as
every request's reads are; inside the usual test transaction nothing would be kept.
"""

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from annotation.pyramids import scu_documents
from annotation.pyramids.models import SCU, ContributorPart

from tests.api.world import client_for

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def nothing_kept():
    scu_documents.clear()
    yield
    scu_documents.clear()


def etag(response) -> str:
    return response["ETag"]


def assert_current(client, world):
    """Both documents that show the pyramid's SCUs show them as a fresh read does."""
    fresh = scu_documents.scu_documents(world.pyramid.pk)
    pyramid = client.get(f"/api/pyramids/{world.pyramid.pk}/full/")
    annotation = client.get(f"/api/annotations/{world.annotation.pk}/full/")
    assert pyramid.status_code == annotation.status_code == 200
    assert pyramid.json()["scus"] == fresh
    assert annotation.json()["pyramid"]["scus"] == fresh
    return pyramid


def test_a_second_read_takes_the_kept_scus_and_shows_the_same_document(world):
    alice = client_for(world.users["alice"])
    url = f"/api/pyramids/{world.pyramid.pk}/full/"
    with CaptureQueriesContext(connection) as first:
        cold = alice.get(url)
    with CaptureQueriesContext(connection) as second:
        warm = alice.get(url)
    assert cold.content == warm.content
    assert len(second) == len(first) - 1  # the SCUs' statement
    assert not any('"annotation_scu"' in q["sql"] for q in second.captured_queries)


def test_every_editing_path_is_served_at_once(world):
    alice = client_for(world.users["alice"], if_match=None)
    tag = etag(assert_current(alice, world))
    # SCU label (an action through the API)
    tag = etag(alice.patch(f"/api/scus/{world.scu1.pk}/", {"label": "Alpha renamed"}, format="json", HTTP_IF_MATCH=tag))
    assert [s["label"] for s in assert_current(alice, world).json()["scus"]] == ["Alpha renamed", "Zeta"]
    # a contributor added and removed, a part added
    added = alice.post(
        "/api/contributors/",
        {"scu": world.scu2.pk, "reference": world.refs["A"].pk, "parts": [{"start": 6, "end": 10}]},
        format="json",
        HTTP_IF_MATCH=tag,
    )
    assert added.status_code == 201, added.content
    assert [s["weight"] for s in assert_current(alice, world).json()["scus"]] == [1, 2]
    removed = alice.delete(f"/api/contributors/{added.json()['id']}/", HTTP_IF_MATCH=etag(added))
    assert removed.status_code == 204, removed.content
    assert [s["weight"] for s in assert_current(alice, world).json()["scus"]] == [1, 1]
    part = alice.post(
        f"/api/contributors/{world.zeta.pk}/parts/", {"start": 0, "end": 5}, format="json", HTTP_IF_MATCH=etag(removed)
    )
    assert part.status_code == 200, part.content
    assert_current(alice, world)
    # a merge, its undo and redo
    merged = alice.post(
        f"/api/scus/{world.scu1.pk}/merge/", {"sources": [world.scu2.pk]}, format="json", HTTP_IF_MATCH=etag(part)
    )
    assert merged.status_code == 200, merged.content
    assert [s["uid"] for s in assert_current(alice, world).json()["scus"]] == [1]
    undone = alice.post(f"/api/pyramids/{world.pyramid.pk}/undo/", {}, format="json", HTTP_IF_MATCH=etag(merged))
    assert undone.status_code == 200, undone.content
    assert [s["uid"] for s in assert_current(alice, world).json()["scus"]] == [1, 2]
    redone = alice.post(f"/api/pyramids/{world.pyramid.pk}/redo/", {}, format="json", HTTP_IF_MATCH=etag(undone))
    assert redone.status_code == 200, redone.content
    assert [s["uid"] for s in assert_current(alice, world).json()["scus"]] == [1]


def test_changes_outside_the_editing_actions_are_served_at_once(world):
    """Saves through the models (the admin, scripts): the signals bump the revision."""
    alice = client_for(world.users["alice"])
    assert_current(alice, world)
    SCU.objects.create(pyramid=world.pyramid, uid=3, label="Made elsewhere")
    assert [s["uid"] for s in assert_current(alice, world).json()["scus"]] == [1, 2, 3]
    part = ContributorPart.objects.get(contributor=world.contributor)
    part.end = 4
    part.save()
    assert assert_current(alice, world).json()["scus"][0]["contributors"][0]["label"] == "Alph"
    # The labels are cut from the reference's text; contributors are ordered by its name.
    reference = world.refs["A"]
    reference.text = "ALPHA beta gamma."
    reference.save()
    assert assert_current(alice, world).json()["scus"][0]["contributors"][0]["label"] == "ALPH"
    world.refs["B"].delete()  # its contributors go in the cascade, each bumping the revision
    assert assert_current(alice, world).json()["scus"][1]["contributors"] == []


def test_what_a_rolled_back_transaction_read_is_never_served(world):
    """Inside a transaction the rows read may be its own, at a revision a rollback hands out again:
    a different committed change reaches the same revision and must be what is served."""
    alice = client_for(world.users["alice"])
    url = f"/api/pyramids/{world.pyramid.pk}/full/"
    revision = alice.get(url).json()["revision"]
    with transaction.atomic():
        scu = SCU.objects.get(pk=world.scu1.pk)
        scu.label = "Never committed"
        scu.save()
        inside = alice.get(url).json()
        assert inside["scus"][0]["label"] == "Never committed" and inside["revision"] == revision + 1
        transaction.set_rollback(True)
    scu = SCU.objects.get(pk=world.scu1.pk)
    scu.label = "Committed"
    scu.save()
    after = alice.get(url).json()
    assert after["revision"] == revision + 1
    assert after["scus"][0]["label"] == "Committed"


def test_kept_scus_never_open_a_pyramid_to_who_may_not_see_it(world):
    client_for(world.users["alice"]).get(f"/api/pyramids/{world.pyramid.pk}/full/")
    assert client_for(world.users["bob"]).get(f"/api/pyramids/{world.pyramid.pk}/full/").status_code == 404
