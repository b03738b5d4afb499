"""No lost updates: ETags on reads, If-Match on content writes (428 without, 409 when stale with
what changed, nothing written), the editing actions, undo/redo and the audit history."""

import pytest

from annotation.history.models import Change
from annotation.peers.models import PeerMatch
from annotation.pyramids.models import SCU, Contributor

from tests.api.world import client_for


def etag(response) -> str:
    return response["ETag"]


@pytest.fixture
def alice(world):
    return client_for(world.users["alice"], if_match=None)


def full(client, world):
    return client.get(f"/api/pyramids/{world.pyramid.pk}/full/")


def test_reads_carry_the_document_revision(world, alice):
    doc = full(alice, world)
    assert etag(doc) == f'"{doc.json()["revision"]}"'
    assert etag(alice.get(f"/api/scus/{world.scu1.pk}/")) == etag(doc)  # an SCU is versioned by its pyramid
    annotation = alice.get(f"/api/annotations/{world.annotation.pk}/full/")
    assert etag(annotation) == f'"{annotation.json()["revision"]}"'


def test_a_write_without_if_match_is_428_and_writes_nothing(world, alice):
    response = alice.patch(f"/api/scus/{world.scu1.pk}/", {"label": "new"}, format="json")
    assert response.status_code == 428 and "If-Match" in response.json()["detail"]
    assert alice.delete(f"/api/contributors/{world.zeta.pk}/").status_code == 428
    assert SCU.objects.get(pk=world.scu1.pk).label == "Alpha" and Contributor.objects.filter(pk=world.zeta.pk).exists()


def test_two_tabs_never_overwrite_each_other(world, alice):
    seen = etag(full(alice, world))
    first = alice.patch(f"/api/scus/{world.scu1.pk}/", {"label": "tab one"}, format="json", HTTP_IF_MATCH=seen)
    assert first.status_code == 200 and etag(first) != seen
    second = alice.patch(f"/api/scus/{world.scu1.pk}/", {"label": "tab two"}, format="json", HTTP_IF_MATCH=seen)
    assert second.status_code == 409
    body = second.json()
    assert f'"{body["revision"]}"' == etag(first)
    assert [c["summary"] for c in body["changes"]] == ["Relabelled SCU 1 “tab one”"] and body["changes"][0][
        "user"
    ] == "alice"
    assert SCU.objects.get(pk=world.scu1.pk).label == "tab one"
    third = alice.patch(f"/api/scus/{world.scu1.pk}/", {"label": "tab two"}, format="json", HTTP_IF_MATCH=etag(first))
    assert third.status_code == 200


def test_builder_actions_end_to_end(world, alice):
    tag = etag(full(alice, world))
    ref_a = world.refs["A"]
    created = alice.post(
        "/api/scus/",
        {"pyramid": world.pyramid.pk, "label": "Gamma", "reference": ref_a.pk, "parts": [{"start": 11, "end": 16}]},
        format="json",
        HTTP_IF_MATCH=tag,
    )
    assert created.status_code == 201, created.json()
    new_scu = SCU.objects.get(pk=created.json()["id"])
    tag = etag(created)
    # a discontinuous contributor: one more part in the same reference
    contributor = new_scu.contributors.get()
    part = alice.post(
        f"/api/contributors/{contributor.pk}/parts/", {"start": 6, "end": 10}, format="json", HTTP_IF_MATCH=tag
    )
    assert part.status_code == 200 and contributor.label == "beta...gamma"
    tag = etag(part)
    assert part.json()["revision"] == int(tag.strip('"'))
    # merging two SCUs with a contributor from the same reference is refused, with the reason
    clash = alice.post(f"/api/scus/{world.scu1.pk}/merge/", {"sources": [new_scu.pk]}, format="json", HTTP_IF_MATCH=tag)
    assert clash.status_code == 400 and "two contributors from reference(s) A" in str(clash.json())
    # merging SCU 2 (from B) into SCU 1 (from A) works
    merged = alice.post(
        f"/api/scus/{world.scu1.pk}/merge/", {"sources": [world.scu2.pk]}, format="json", HTTP_IF_MATCH=tag
    )
    assert merged.status_code == 200 and SCU.objects.get(pk=world.scu1.pk).contributors.count() == 2
    tag = etag(merged)
    # split the B contributor off again, then move it back
    split = alice.post(
        f"/api/contributors/{world.zeta.pk}/split/", {"label": "Zeta again"}, format="json", HTTP_IF_MATCH=tag
    )
    assert split.status_code == 200 and split.json()["scu"]["label"] == "Zeta again"
    tag = etag(split)
    moved = alice.post(
        f"/api/contributors/{world.zeta.pk}/move/", {"scu": world.scu1.pk}, format="json", HTTP_IF_MATCH=tag
    )
    assert moved.status_code == 200 and Contributor.objects.get(pk=world.zeta.pk).scu_id == world.scu1.pk
    tag = etag(moved)
    removed = alice.delete(
        f"/api/contributors/{contributor.pk}/parts/{contributor.parts.order_by('start').first().pk}/", HTTP_IF_MATCH=tag
    )
    assert removed.status_code == 200 and contributor.label == "gamma"
    tag = etag(removed)
    # undo the last two changes, redo one
    for _ in range(2):
        undone = alice.post(f"/api/pyramids/{world.pyramid.pk}/undo/", {}, format="json", HTTP_IF_MATCH=tag)
        assert undone.status_code == 200, undone.json()
        tag = etag(undone)
    # undo re-creates the contributors it restores: look them up through their SCU
    assert SCU.objects.get(pk=new_scu.pk).contributors.get().label == "beta...gamma"
    assert SCU.objects.get(pk=world.scu1.pk).contributors.count() == 1  # the move of B's contributor is undone
    redone = alice.post(f"/api/pyramids/{world.pyramid.pk}/redo/", {}, format="json", HTTP_IF_MATCH=tag)
    assert redone.status_code == 200 and redone.json()["change"]["summary"].startswith("Redo: ")
    history = alice.get(f"/api/pyramids/{world.pyramid.pk}/history/").json()["results"]
    assert history[0]["action"] == "redo" and {h["user"] for h in history} == {"alice"}


def test_history_is_everyones_for_coordinators_and_own_for_others(world):
    coord = client_for(world.users["coord"])
    alice = client_for(world.users["alice"])
    coord.patch(f"/api/scus/{world.scu1.pk}/", {"label": "by coord"}, format="json")
    alice.patch(f"/api/scus/{world.scu1.pk}/", {"label": "by alice"}, format="json")
    everyone = coord.get(f"/api/pyramids/{world.pyramid.pk}/history/").json()["results"]
    assert [h["user"] for h in everyone] == ["alice", "coord"]
    assert everyone[0]["before"]["1"]["label"] == "by coord" and everyone[0]["after"]["1"]["label"] == "by alice"
    assert [h["user"] for h in alice.get(f"/api/pyramids/{world.pyramid.pk}/history/").json()["results"]] == ["alice"]


def test_peer_actions_undo_and_conflict(world, alice):
    doc = alice.get(f"/api/annotations/{world.annotation.pk}/full/")
    tag = etag(doc)
    again = alice.post(
        "/api/matches/",
        {"annotation": world.annotation.pk, "scu": world.scu1.pk, "parts": [{"start": 0, "end": 5}]},
        format="json",
        HTTP_IF_MATCH=tag,
    )
    assert again.status_code == 201
    assert PeerMatch.objects.filter(annotation=world.annotation, scu=world.scu1).count() == 2  # a repetition
    stale = alice.post(
        "/api/matches/",
        {"annotation": world.annotation.pk, "scu": None, "parts": [{"start": 15, "end": 23}]},
        format="json",
        HTTP_IF_MATCH=tag,
    )
    assert stale.status_code == 409 and stale.json()["changes"][0]["summary"] == "Matched SCU 1"
    undone = alice.post(f"/api/annotations/{world.annotation.pk}/undo/", {}, format="json", HTTP_IF_MATCH=etag(again))
    assert undone.status_code == 200
    assert PeerMatch.objects.filter(annotation=world.annotation).count() == 1
    assert (
        alice.post(
            f"/api/annotations/{world.annotation.pk}/undo/", {}, format="json", HTTP_IF_MATCH=etag(undone)
        ).status_code
        == 400
    )  # nothing left
    assert doc.json()["progress"] == {"done": 1, "total": 2}  # the fixture's annotation of peer 1 is finished
    assert doc.json()["next"]["peer"] == "2" and doc.json()["next"]["annotation"] is None


@pytest.mark.parametrize(
    "role,expected", [("bob", 404), ("carol", 403), ("other_coord", 404), ("anon", 401), ("coord", 200), ("admin", 200)]
)
def test_who_may_use_the_actions(world, role, expected):
    client = client_for(world.users.get(role))
    response = client.post(f"/api/scus/{world.scu1.pk}/merge/", {"sources": [world.scu2.pk]}, format="json")
    assert response.status_code == expected
    undo = client.post(f"/api/pyramids/{world.pyramid.pk}/undo/", {}, format="json")
    assert undo.status_code == expected  # allowed users undo their own merge
    assert SCU.objects.filter(pyramid=world.pyramid, uid=2).exists()
    if expected != 200:
        assert not Change.objects.filter(action="merge_scus").exists()


@pytest.mark.parametrize(
    "path,change", [("topics/{t}/", {"title": "New title"}), ("assignments/{a}/", {"status": "done"})]
)
def test_metadata_objects_have_versions_too(world, path, change):
    coord = client_for(world.users["coord"], if_match=None)
    url = "/api/" + path.format(t=world.t1.pk, a=world.assignment.pk)
    seen = coord.get(url)["ETag"]
    assert coord.patch(url, change, format="json", HTTP_IF_MATCH=seen).status_code == 200  # current version: applied
    stale = coord.patch(url, change, format="json", HTTP_IF_MATCH=seen)  # same version again: stale now
    assert stale.status_code == 409 and stale.json()["current"]
    assert coord.patch(url, change, format="json").status_code == 200  # no If-Match: metadata is not a document
