"""Attacks of the hardening issue, replayed against the API: existence oracles (filters and the
assignment uniqueness check answer the same for what you may not see as for what does not exist),
unbounded work (lists in a request are bounded, with a 400 naming the limit), overlapping parts."""

import pytest

from annotation.corpus.models import Assignment
from annotation.peers.models import PeerMatch
from annotation.pyramids import actions
from annotation.pyramids.models import Contributor, ContributorPart
from annotation.pyramids.spans import MAX_PARTS

MISSING = 987654321


@pytest.mark.parametrize(
    "role, path, invisible",
    [
        ("bob", "/api/scus/?pyramid={}", lambda w: w.pyramid.pk),  # alice's pyramid, still hidden from bob
        ("bob", "/api/contributors/?scu={}", lambda w: w.scu1.pk),
        ("carol", "/api/matches/?annotation={}", lambda w: w.annotation.pk),  # alice's annotation
        ("carol", "/api/annotations/?annotator={}", lambda w: w.users["alice"].pk),
        ("other_coord", "/api/topics/?dataset={}", lambda w: w.d1.pk),
        ("other_coord", "/api/assignments/?topic={}", lambda w: w.t1.pk),
    ],
)
def test_filter_answers_the_same_for_an_invisible_and_a_missing_id(world, as_user, role, path, invisible):
    client = as_user(role)
    hidden = client.get(path.format(invisible(world)))
    missing = client.get(path.format(MISSING))
    assert (
        (hidden.status_code, hidden.json())
        == (missing.status_code, missing.json())
        == (200, {"count": 0, "next": None, "previous": None, "results": []})
    )


def test_malformed_filter_ids_are_refused_alike(world, as_user):
    answer = as_user("bob").get("/api/scus/?pyramid=abc")
    assert answer.status_code == 400 and "pyramid" in answer.json()


def test_assignment_uniqueness_does_not_reveal_others_assignments(world, as_user):
    """bob may not assign anyone: whether alice already has the task must not show."""
    taken = {"topic": world.t1.pk, "annotator": world.users["alice"].pk, "task": "build_pyramid"}  # exists
    free = {"topic": world.t1.pk, "annotator": world.users["carol"].pk, "task": "build_pyramid"}  # does not
    a, b = (
        as_user("bob").post("/api/assignments/", taken, format="json"),
        as_user("bob").post("/api/assignments/", free, format="json"),
    )
    assert (a.status_code, a.json()) == (b.status_code, b.json()) and a.status_code == 403


def test_coordinator_still_told_about_a_duplicate_assignment(world, as_user):
    duplicate = {"topic": world.t1.pk, "annotator": world.users["alice"].pk, "task": "build_pyramid"}
    answer = as_user("coord").post("/api/assignments/", duplicate, format="json")
    assert answer.status_code == 400 and "already exists" in str(answer.json())
    assert Assignment.objects.filter(topic=world.t1, annotator=world.users["alice"], task="build_pyramid").count() == 1


@pytest.mark.parametrize(
    "path, body",
    [
        ("/api/contributors/", lambda w, parts: {"scu": w.scu1.pk, "reference": w.refs["B"].pk, "parts": parts}),
        (
            "/api/scus/",
            lambda w, parts: {"pyramid": w.pyramid.pk, "label": "Many", "reference": w.refs["A"].pk, "parts": parts},
        ),
        ("/api/matches/", lambda w, parts: {"annotation": w.annotation.pk, "scu": w.scu2.pk, "parts": parts}),
    ],
)
def test_parts_per_request_are_bounded(world, as_user, path, body):
    """The attack: 10,000 parts in one request (it killed the worker). Refused before any work."""
    parts = [{"start": i % 10, "end": i % 10 + 1} for i in range(10_000)]
    before = (Contributor.objects.count(), ContributorPart.objects.count(), PeerMatch.objects.count())
    answer = as_user("alice").post(path, body(world, parts), format="json")
    assert answer.status_code == 400
    assert answer.json() == {
        "parts": {"non_field_errors": [f"Ensure this field has no more than {MAX_PARTS} elements."]}
    } or f"no more than {MAX_PARTS}" in str(answer.json())
    assert (Contributor.objects.count(), ContributorPart.objects.count(), PeerMatch.objects.count()) == before


def test_merge_sources_are_bounded(world, as_user):
    answer = as_user("alice").post(
        f"/api/scus/{world.scu1.pk}/merge/", {"sources": [world.scu2.pk] * 5000}, format="json"
    )
    assert answer.status_code == 400 and "no more than 100" in str(answer.json())


def test_adding_parts_one_by_one_is_bounded(world, monkeypatch):
    from django.core.exceptions import ValidationError

    monkeypatch.setattr(actions, "MAX_PARTS", 2)
    actions.add_part_to(world.contributor, world.users["alice"], start=6, end=10)
    with pytest.raises(ValidationError, match="at most 2 parts"):
        actions.add_part_to(world.contributor, world.users["alice"], start=11, end=16)
    assert world.contributor.parts.count() == 2


@pytest.mark.parametrize(
    "path, body",
    [
        (
            "/api/contributors/",
            lambda w: {
                "scu": w.scu1.pk,
                "reference": w.refs["B"].pk,
                "parts": [{"start": 0, "end": 5}, {"start": 3, "end": 8}],
            },
        ),
        (
            "/api/scus/",
            lambda w: {
                "pyramid": w.pyramid.pk,
                "label": "Twice",
                "reference": w.refs["A"].pk,
                "parts": [{"start": 6, "end": 10}, {"start": 0, "end": 7}],
            },
        ),
    ],
)
def test_creating_a_contributor_refuses_overlapping_parts(world, as_user, path, body):
    before = ContributorPart.objects.count()
    answer = as_user("alice").post(path, body(world), format="json")
    assert answer.status_code == 400 and "overlaps part 1" in str(answer.json()["parts"]), answer.json()
    assert ContributorPart.objects.count() == before


def _revision(response) -> int:
    return int(response["ETag"].strip('"'))


@pytest.mark.parametrize(
    "path, body",
    [
        ("/api/scus/{scu1}/", {"label": "Alpha"}),  # the current label
        ("/api/contributors/{contributor}/", {"comment": ""}),  # the current comment
        ("/api/matches/{match}/", {"scu": "{scu1_id}"}),  # where it already is
    ],
)
def test_a_patch_that_changes_nothing_keeps_the_revision(world, as_user, path, body):
    """Spurious 409s: a no-op PATCH used to bump the revision, so a co-editor's next write conflicted."""
    ids = {"scu1": world.scu1.pk, "contributor": world.contributor.pk, "match": world.match.pk}
    url = path.format(**ids)
    body = {k: (world.scu1.pk if v == "{scu1_id}" else v) for k, v in body.items()}
    client = as_user("alice")
    seen = _revision(client.get(url))
    noop = client.patch(url, body, format="json", HTTP_IF_MATCH=f'"{seen}"')
    assert noop.status_code == 200 and _revision(noop) == seen
    # a co-editor who read the same revision writes without a conflict
    other = client.patch(
        f"/api/scus/{world.scu1.pk}/" if "matches" not in url else url,
        {"comment": "checked"} if "matches" not in url else {"scu": world.scu2.pk},
        format="json",
        HTTP_IF_MATCH=f'"{seen}"',
    )
    assert other.status_code == 200 and _revision(other) > seen


def test_assignment_creation_does_not_reveal_which_user_ids_exist(world, as_user):
    existing = {"topic": world.t1.pk, "annotator": world.users["carol"].pk, "task": "build_pyramid"}
    missing = {**existing, "annotator": MISSING}
    a, b = (
        as_user("bob").post("/api/assignments/", existing, format="json"),
        as_user("bob").post("/api/assignments/", missing, format="json"),
    )
    assert (a.status_code, a.json()) == (b.status_code, b.json()) and a.status_code == 403
    told = as_user("coord").post("/api/assignments/", missing, format="json")  # who may assign is told what is wrong
    assert told.status_code == 400 and "annotator" in told.json()
