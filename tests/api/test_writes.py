"""Writes to SCUs, contributors and matches are the editors' actions: recorded in the document's
history (so undo and the audit trail see them) and with their rules."""

from annotation.history.models import Change
from annotation.peers.models import PeerMatch
from annotation.pyramids.models import SCU, Contributor


def test_scu_created_from_a_span_with_the_next_uid(world, as_user):
    response = as_user("alice").post(
        "/api/scus/",
        {
            "pyramid": world.pyramid.pk,
            "label": "Gamma",
            "reference": world.refs["A"].pk,
            "parts": [{"start": 11, "end": 16}],
        },
        format="json",
    )
    assert response.status_code == 201
    body = response.json()
    assert (body["uid"], body["weight"], body["label"]) == (3, 1, "Gamma")
    assert SCU.objects.get(pk=body["id"]).contributors.get().parts.get().start == 11
    change = Change.objects.filter(pyramid=world.pyramid).first()
    assert (change.action, change.user) == ("create_scu", world.users["alice"])


def test_edits_are_recorded_with_their_user(world, as_user):
    coord = as_user("coord")
    assert coord.patch(f"/api/scus/{world.scu1.pk}/", {"label": "Alpha again"}, format="json").status_code == 200
    assert (
        coord.patch(f"/api/contributors/{world.contributor.pk}/", {"comment": "checked"}, format="json").status_code
        == 200
    )
    assert (
        coord.patch(f"/api/matches/{world.match.pk}/", {"scu": world.scu2.pk}, format="json").json()["scu"]
        == world.scu2.pk
    )
    assert list(Change.objects.order_by("id").values_list("action", "user__username")) == [
        ("update_scu", "coord"),
        ("update_contributor", "coord"),
        ("move_match", "coord"),
    ]


def test_removing_the_last_contributor_removes_the_scu(world, as_user):
    assert as_user("alice").delete(f"/api/contributors/{world.zeta.pk}/").status_code == 204
    assert not SCU.objects.filter(pk=world.scu2.pk).exists()
    assert Change.objects.get().action == "remove_contributor"


def test_contributor_reference_must_be_one_of_the_pyramids(world, as_user):
    world.pyramid.references.remove(world.refs["B"])
    response = as_user("alice").post(
        "/api/contributors/",
        {"scu": world.scu1.pk, "reference": world.refs["B"].pk, "parts": [{"start": 0, "end": 5}]},
        format="json",
    )
    assert response.status_code == 400 and "not one of the pyramid's references" in response.json()["reference"][0]
    assert Contributor.objects.count() == 2 and not Change.objects.exists()


def test_match_and_unmatch(world, as_user):
    client = as_user("alice")
    created = client.post(
        "/api/matches/",
        {"annotation": world.annotation.pk, "scu": None, "parts": [{"start": 6, "end": 13}]},
        format="json",
    )
    assert created.status_code == 201 and created.json()["scu"] is None
    assert client.delete(f"/api/matches/{created.json()['id']}/").status_code == 204
    assert PeerMatch.objects.count() == 1
    assert list(Change.objects.order_by("id").values_list("action", flat=True)) == ["add_match", "remove_match"]


def test_a_write_makes_the_stored_score_stale_until_recomputed(world, as_user):
    from annotation.peers.recompute import recompute_annotations

    client = as_user("alice")
    url = f"/api/annotations/{world.annotation.pk}/full/"
    recompute_annotations([world.annotation.pk])  # what the worker does after a commit
    assert client.get(url).json()["score"]["current"] is True
    client.post(
        "/api/matches/",
        {"annotation": world.annotation.pk, "scu": world.scu2.pk, "parts": [{"start": 19, "end": 23}]},
        format="json",
    )
    assert client.get(url).json()["score"] == {"convention": "nist", "current": False, "values": None, "delayed": None}
    recompute_annotations([world.annotation.pk])
    score = client.get(url).json()["score"]
    assert score["current"] is True and score["values"]["matched_scus"] == 2


def test_an_action_bumps_the_revisions_once_in_a_fixed_number_of_queries(world, as_user, django_assert_max_num_queries):
    """A contributor with three parts, or a match with two spans, is four or three rows: the
    document's and the topic's revisions move by one (the action's), and the request's queries do
    not grow with the rows (each row once cost a lookup of its pyramid and two updates)."""
    client = as_user("alice")
    for document in (world.pyramid, world.t1, world.annotation):
        document.refresh_from_db()
    pyramid, topic = world.pyramid.revision, world.t1.revision
    with django_assert_max_num_queries(40):
        added = client.post(
            "/api/contributors/",
            {
                "scu": world.scu1.pk,
                "reference": world.refs["B"].pk,
                "parts": [{"start": 0, "end": 5}, {"start": 6, "end": 13}, {"start": 14, "end": 18}],
            },
            format="json",
        )
    assert added.status_code == 201 and added.json()["revision"] == pyramid + 1 and added["ETag"] == f'"{pyramid + 1}"'
    world.pyramid.refresh_from_db()
    world.t1.refresh_from_db()
    assert (world.pyramid.revision, world.t1.revision) == (pyramid + 1, topic + 1)
    assert Change.objects.get(action="add_contributor").revision == pyramid + 1
    annotation = world.annotation.revision
    with django_assert_max_num_queries(30):
        matched = client.post(
            "/api/matches/",
            {
                "annotation": world.annotation.pk,
                "scu": world.scu2.pk,
                "parts": [{"start": 19, "end": 23}, {"start": 0, "end": 5}],
            },
            format="json",
        )
    assert matched.status_code == 201 and matched.json()["revision"] == annotation + 1
    world.annotation.refresh_from_db()
    world.t1.refresh_from_db()
    assert (world.annotation.revision, world.t1.revision) == (annotation + 1, topic + 2)
