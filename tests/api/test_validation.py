"""Bad input: 400 with field-level messages, and nothing written."""

import pytest

from annotation.peers.models import PeerAnnotation, PeerMatch, PeerMatchPart
from annotation.pyramids.models import SCU, Contributor, ContributorPart, Pyramid

from tests.foundation.factories import pyramid as make_pyramid
from tests.foundation.factories import topic as make_topic

MODELS = (SCU, Contributor, ContributorPart, PeerAnnotation, PeerMatch, PeerMatchPart, Pyramid)


@pytest.fixture
def post(world, as_user):
    """POST as alice (who may write her pyramid and annotation); assert 400 and that nothing changed."""
    client = as_user("alice")

    def rejected(url, payload, method="post"):
        before = [m.objects.count() for m in MODELS]
        response = getattr(client, method)(url, payload, format="json")
        assert response.status_code == 400, response.content
        assert [m.objects.count() for m in MODELS] == before, "a rejected request must write nothing"
        return response.json()

    return rejected


def contributor(world, parts, reference="A", **extra):
    return {"scu": world.scu2.pk, "reference": world.refs[reference].pk, "parts": parts, **extra}


def test_contributor_offsets_outside_the_text(world, post):
    length = len(world.refs["A"].text)
    errors = post("/api/contributors/", contributor(world, [{"start": 0, "end": 5}, {"start": 3, "end": length + 1}]))
    assert list(errors["parts"]) == ["1"], "only the bad part is reported, by its index"
    assert "past the end of the text" in errors["parts"]["1"]["end"][0]
    errors = post("/api/contributors/", contributor(world, [{"start": -1, "end": 5}]))
    assert "greater than or equal to 0" in errors["parts"]["0"]["start"][0]


@pytest.mark.parametrize("start,end", [(5, 5), (6, 2)])
def test_empty_or_reversed_spans(world, post, start, end):
    errors = post("/api/contributors/", contributor(world, [{"start": start, "end": end}]))
    assert "empty or reversed" in errors["parts"]["0"]["end"][0]
    errors = post(
        "/api/matches/",
        {"annotation": world.annotation.pk, "scu": world.scu2.pk, "parts": [{"start": start, "end": end}]},
    )
    assert "empty or reversed" in errors["parts"]["0"]["end"][0]


def test_peer_span_outside_the_peer_text(world, post):
    errors = post(
        "/api/matches/", {"annotation": world.annotation.pk, "scu": None, "parts": [{"start": 0, "end": 999}]}
    )
    assert "past the end" in errors["parts"]["0"]["end"][0]


def test_no_parts(world, post):
    assert "may not be empty" in post("/api/contributors/", contributor(world, []))["parts"]["non_field_errors"][0]
    assert "required" in post("/api/matches/", {"annotation": world.annotation.pk, "scu": None})["parts"][0]


def test_match_with_an_scu_of_another_pyramid(world, post):
    other, scus = make_pyramid(world.t1, world.refs, uids=(5,))
    other.creator = world.users["alice"]
    other.save()
    errors = post(
        "/api/matches/", {"annotation": world.annotation.pk, "scu": scus[5].pk, "parts": [{"start": 0, "end": 5}]}
    )
    assert "belongs to another pyramid" in errors["scu"][0]


def test_second_contributor_from_the_same_reference(world, post):
    errors = post(
        "/api/contributors/",
        {"scu": world.scu1.pk, "reference": world.refs["A"].pk, "parts": [{"start": 6, "end": 10}]},
    )
    assert "already has a contributor from reference A" in errors["reference"][0]


def test_contributor_from_a_reference_of_another_topic(world, post, as_user):
    _, refs = make_topic("T2", "D1")
    errors = post(
        "/api/contributors/", {"scu": world.scu2.pk, "reference": refs["A"].pk, "parts": [{"start": 0, "end": 5}]}
    )
    assert "does not exist" in errors["reference"][0], "alice is not assigned to T2: its references are unknown to her"
    response = as_user("coord").post(
        "/api/contributors/",
        {"scu": world.scu2.pk, "reference": refs["A"].pk, "parts": [{"start": 0, "end": 5}]},
        format="json",
    )
    assert response.status_code == 400 and "not one of the pyramid's references" in response.json()["reference"][0]
    assert not Contributor.objects.filter(reference=refs["A"]).exists()


def test_pyramid_references_of_another_topic(world, as_user):
    _, refs = make_topic("T2", "D1")
    response = as_user("coord").post(
        "/api/pyramids/", {"topic": world.t1.pk, "references": [refs["A"].pk]}, format="json"
    )
    assert response.status_code == 400 and "belongs to another topic" in response.json()["references"][0]
    assert Pyramid.objects.count() == 1


def test_annotation_against_a_pyramid_of_another_topic(world, as_user):
    t2, refs = make_topic("T2", "D1")
    other, _ = make_pyramid(t2, refs)
    response = as_user("coord").post("/api/annotations/", {"peer": world.peer2.pk, "pyramid": other.pk}, format="json")
    assert response.status_code == 400 and "another topic" in response.json()["pyramid"][0]
    assert PeerAnnotation.objects.count() == 1


def test_second_annotation_of_the_same_peer(world, post):
    errors = post("/api/annotations/", {"peer": world.peer1.pk, "pyramid": world.pyramid.pk})
    assert "already exists" in errors["non_field_errors"][0]


def test_unknown_and_read_only_fields_are_refused(world, post):
    errors = post("/api/scus/", {"pyramid": world.pyramid.pk, "uid": 3, "label": "x", "wieght": 3, "weight": 3})
    assert errors == {
        "wieght": ["Unknown field."],
        "weight": ["This field is read-only."],
        "uid": ["This field is read-only."],
    }
    errors = post("/api/contributors/", contributor(world, [{"start": 0, "end": 5, "text": "Alpha"}]))
    assert errors == {"parts": {"0": {"text": ["Unknown field."]}}}
    errors = post(f"/api/scus/{world.scu1.pk}/", {"label": "ok", "colour": "red"}, method="patch")
    assert errors == {"colour": ["Unknown field."]}


def test_moving_an_object_is_refused(world, post):
    other, _ = make_pyramid(world.t1, world.refs, uids=())
    errors = post(f"/api/scus/{world.scu1.pk}/", {"pyramid": other.pk}, method="patch")
    assert errors == {"pyramid": ["Cannot be changed after creation."]}
    assert SCU.objects.get(pk=world.scu1.pk).pyramid == world.pyramid


@pytest.mark.parametrize(
    "payload,field",
    [
        ({"label": ""}, "label"),
        ({"label": "   "}, "label"),  # the action's rule: a label is not blank
        ({"label": ["x"]}, "label"),
        ({}, "label"),
        ({"label": "x", "reference": "A"}, "reference"),
        ({"label": "x", "comment": "later"}, "comment"),
    ],
)
def test_wrong_scu_values(world, post, payload, field):
    base = {"pyramid": world.pyramid.pk, "reference": world.refs["A"].pk, "parts": [{"start": 6, "end": 10}]}
    assert field in post("/api/scus/", {**base, **payload})


def test_scu_span_outside_the_reference(world, post):
    errors = post(
        "/api/scus/",
        {
            "pyramid": world.pyramid.pk,
            "label": "x",
            "reference": world.refs["A"].pk,
            "parts": [{"start": 6, "end": 99}],
        },
    )
    assert "past the end" in errors["parts"]["0"]["end"][0]


def test_matched_scu_cannot_be_deleted(world, as_user):
    response = as_user("alice").delete(f"/api/scus/{world.scu1.pk}/")
    assert response.status_code == 400 and "remove those matches first" in response.json()["scu"][0]
    assert SCU.objects.filter(pk=world.scu1.pk).exists()


@pytest.mark.parametrize("parts", ["0-5", [[0, 5]], [{"start": "a", "end": 5}], [{"start": 0}], {"start": 0, "end": 5}])
def test_wrong_part_types(world, post, parts):
    assert "parts" in post("/api/contributors/", contributor(world, parts))


def test_body_must_be_an_object(world, post):
    assert "non_field_errors" in post("/api/scus/", [{"pyramid": world.pyramid.pk, "uid": 3, "label": "x"}])


def test_a_reference_with_contributors_stays_in_the_pyramid(world, as_user):
    response = as_user("alice").patch(
        f"/api/pyramids/{world.pyramid.pk}/", {"references": [world.refs["A"].pk]}, format="json"
    )
    assert response.status_code == 400 and "Reference B has contributors" in response.json()["references"][0]
    assert world.pyramid.references.count() == 2
