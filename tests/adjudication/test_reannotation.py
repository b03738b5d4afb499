"""After a topic's pyramid is adjudicated: progress counts as the scores count on every page and in
the API, the peers to annotate again are listed to the coordinator and to each annotator, and
carrying matches over copies those whose SCU maps to an adjudicated SCU (one recorded, undoable
action of the annotator's own). ``adjudication/reannotation.py``, ``peers.results.progress_counting``."""

import pytest
from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied
from rest_framework.test import APIClient

from annotation.adjudication import reannotation
from annotation.adjudication.models import PyramidAdjudication
from annotation.corpus.models import Assignment
from annotation.history import changes
from annotation.history.models import Change
from annotation.peers import assignments
from annotation.peers.document_states import annotation_state
from annotation.peers.editing import add_match
from annotation.peers.models import PeerAnnotation
from annotation.peers.results import score_rows
from annotation.pyramids.models import SCU
from scoring.model import Convention

from tests.adjudication.pyramid_world import annotated_then_adjudicated
from tests.transfer.test_archive_round_trip import own_names

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        return annotated_then_adjudicated()


def scored_peers(topic, username) -> int:
    """Independently of progress: the peers the score tables hold a row of for this annotator."""
    return len(
        {
            r["summary"]
            for r in score_rows(topic.dataset.topics.all(), Convention.NIST, include_references=False)
            if r["annotator"] == username
        }
    )


def progress_everywhere(client, world, username) -> dict:
    """Every figure of ``username``'s progress: service, home page, overview, API document."""
    assignment = world["work"][username]
    user = assignment.annotator
    client.force_login(user)
    home = {a.pk: p.done for a, p, _ in client.get("/").context["assignments"]}
    peer = world["topic"].peersummarys.get(external_id="2")
    api = APIClient()
    api.force_authenticate(user)
    document = api.get(f"/api/assignments/{assignment.pk}/peers/{peer.pk}/full/").json()
    client.force_login(world["coordinator"])
    overview = client.get(f"/datasets/{world['dataset'].pk}/")
    items = {
        i["assignment"].pk: i["progress"].done
        for row in overview.context["rows"]
        for cell in row["cells"]
        for i in cell["items"]
    }
    return {
        "service": assignments.progress(assignment).done,
        "home": home[assignment.pk],
        "api": document["progress"]["done"],
        "overview": items[assignment.pk],
        "overview_peers": overview.context["totals"]["peers_done"],
    }


def everywhere(done: int) -> dict:
    return dict.fromkeys(("service", "home", "api", "overview", "overview_peers"), done)


def test_progress_counts_as_the_scores_count(world, client, django_capture_on_commit_callbacks):
    topic = world["topic"]
    assert scored_peers(topic, "ann3") == 0, "annotations against the annotators' pyramids are no longer scored"
    assert progress_everywhere(client, world, "ann3") == everywhere(0)
    with django_capture_on_commit_callbacks(execute=True):
        peer = topic.peersummarys.get(external_id="1")
        carried = reannotation.carry_over(world["work"]["ann3"], peer, world["work"]["ann3"].annotator).value.annotation
        assert scored_peers(topic, "ann3") == 0, "a carried annotation is in progress: not scored until finished"
        assert progress_everywhere(client, world, "ann3")["service"] == 0
        PeerAnnotation.objects.filter(pk=carried.pk).update(status=PeerAnnotation.Status.DONE)
    assert scored_peers(topic, "ann3") == 1
    assert progress_everywhere(client, world, "ann3") == everywhere(1)
    assert progress_everywhere(client, world, "ann4")["service"] == scored_peers(topic, "ann4") == 0


def statuses(client, world) -> dict:
    """Each annotator's assignment status, as stored and as the overview and their home show it;
    and the overview's count of assignments done."""
    client.force_login(world["coordinator"])
    overview = client.get(f"/datasets/{world['dataset'].pk}/").context
    shown = {
        i["assignment"].annotator.username: i["assignment"].status
        for row in overview["rows"]
        for cell in row["cells"]
        for i in cell["items"]
    }
    out = {"assignments_done": overview["totals"]["assignments_done"]}
    for username, assignment in world["work"].items():
        client.force_login(assignment.annotator)
        home = {a.pk: a.status for a, _, _ in client.get("/").context["assignments"]}
        stored = Assignment.objects.get(pk=assignment.pk).status
        assert stored == shown[username] == home[assignment.pk], (username, stored, shown, home)
        out[username] = stored
    return out


def test_the_adjudication_reopens_the_assignments_until_their_peers_are_annotated_again(world, client):
    """Finished before the pyramid was adjudicated, both assignments are in progress again (their
    peers count 0 of 3); marking one done leaves it in progress while peers are left; once its
    annotator has finished every peer against the adjudicated pyramid it is done again."""
    assert statuses(client, world) == {"assignments_done": 0, "ann3": "in_progress", "ann4": "in_progress"}
    assignment = world["work"]["ann3"]
    client.force_login(assignment.annotator)
    said = [str(m) for m in client.post(f"/assignments/{assignment.pk}/done/", follow=True).context["messages"]]
    assert said == [
        f"Annotate peers of {world['topic'].external_id} is not done yet. It stays in progress: 3 peers to "
        "re-annotate against the topic's adjudicated pyramid first."
    ], "the page says why instead of claiming it done"
    assert statuses(client, world)["ann3"] == "in_progress", "3 peers are left to re-annotate"
    client.force_login(world["coordinator"])  # the overview's status field says why too
    answer = client.post(
        f"/datasets/{world['dataset'].pk}/assignments/{assignment.pk}/", {"status": "done"}, follow=True
    )
    assert [str(m) for m in answer.context["messages"]][-1].endswith(
        "It stays in progress: 3 peers to re-annotate against the topic's adjudicated pyramid first."
    )
    assert statuses(client, world)["ann3"] == "in_progress"
    api = APIClient()
    api.force_authenticate(assignment.annotator)
    for peer in world["topic"].peersummarys.order_by("external_id"):
        assert statuses(client, world)["ann3"] == "in_progress"
        body = api.post(f"/api/assignments/{assignment.pk}/peers/{peer.pk}/carry-over/").json()
        assert (
            api.patch(f"/api/annotations/{body['annotation']['id']}/", {"status": "done"}, format="json").status_code
            == 200
        )
    assert statuses(client, world) == {"assignments_done": 1, "ann3": "done", "ann4": "in_progress"}
    assert progress_everywhere(client, world, "ann3") == everywhere(3)
    # a peer reopened: the assignment is in progress again
    reopened = PeerAnnotation.objects.get(
        peer__external_id="2", annotator=assignment.annotator, pyramid=world["adjudicated"]
    )
    assert api.patch(f"/api/annotations/{reopened.pk}/", {"status": "in_progress"}, format="json").status_code == 200
    assert statuses(client, world)["ann3"] == "in_progress"


def test_without_adjudication_progress_counts_each_peer_once(world):
    """Two finished annotations of one peer against two pyramids (no adjudicated pyramid) are one
    peer done, as the score tables count one peer per topic."""
    PyramidAdjudication.objects.all().delete()
    world["adjudicated"].delete()
    work = world["work"]["ann4"]
    peer = world["topic"].peersummarys.get(external_id="1")
    PeerAnnotation.objects.create(peer=peer, pyramid=world["a"], annotator=work.annotator, status="done")
    assert assignments.progress(work).done == 3 == scored_peers(world["topic"], "ann4")
    assert reannotation.for_assignment(work) == []


def test_the_peers_to_annotate_again_are_listed(world, client):
    topic = world["topic"]
    assert reannotation.by_topic(world["dataset"]) == {topic.pk: {"ann3": ["1", "2", "3"], "ann4": ["1", "2", "3"]}}
    assignment = world["work"]["ann3"]
    assert [r.peer for r in reannotation.for_assignment(assignment)] == ["1", "2", "3"]
    peer = topic.peersummarys.get(external_id="2")
    target = reannotation.carry_over(assignment, peer, assignment.annotator).value.annotation
    assert [r.peer for r in reannotation.for_assignment(assignment)] == ["1", "2", "3"], "in progress: still to do"
    PeerAnnotation.objects.filter(pk=target.pk).update(status="done")
    assert reannotation.by_topic(world["dataset"])[topic.pk] == {"ann3": ["1", "3"], "ann4": ["1", "2", "3"]}

    client.force_login(world["coordinator"])
    page = client.get(f"/datasets/{world['dataset'].pk}/").content.decode()
    assert 'data-reannotate="T1"' in page
    assert "ann3</span>: 2 peers (1, 3)" in page and "ann4</span>: 3 peers (1, 2, 3)" in page
    assert 'data-reannotate-total><div class="value">5</div>' in page
    client.force_login(assignment.annotator)
    home = client.get("/").content.decode()
    assert "your annotations of 2 peers are no longer scored" in home
    assert home.count("Carry over matches") == 2
    stale = PeerAnnotation.objects.get(peer__external_id="1", annotator=assignment.annotator, pyramid=world["b"])
    page = client.get(f"/annotations/{stale.pk}/").content.decode()
    assert "This annotation was made against your pyramid before the topic's pyramid was adjudicated" in page
    assert f"/assignments/{assignment.pk}/peers/{stale.peer_id}/carry-over/" in page
    # untouched against the adjudicated pyramid
    page = client.get(f"/assignments/{assignment.pk}/peers/{stale.peer_id}/").content.decode()
    assert "You annotated this peer against your pyramid before" in page
    assert "data-reannotate" not in client.get(f"/annotations/{target.pk}/").content.decode(), "peer 2 is done again"


def matches(annotation) -> list:
    state = annotation_state(annotation)["matches"]
    return sorted((m["scu"] or 0, tuple(map(tuple, m["parts"]))) for m in state)


def test_carry_over_copies_the_matches_of_mapped_scus(world):
    assignment, adjudicated = world["work"]["ann3"], world["adjudicated"]
    user = assignment.annotator
    peer = world["topic"].peersummarys.get(external_id="1")
    outcome = reannotation.carry_over(assignment, peer, user)
    result = outcome.value
    # B's SCU 1 -> 1 (agreed), 2 -> 2 (union_a of the pair), 5 -> 4 ("horses run" kept); the non-matching unit is left.
    assert (result.carried, result.present, result.left) == (3, 0, 1)
    assert result.annotation.pyramid == adjudicated and result.annotation.status == "in_progress"
    assert matches(result.annotation) == [(1, ((0, 9),)), (2, ((14, 23),)), (4, ((30, 40),))]
    change = Change.objects.get(annotation=result.annotation)
    assert (change.action, change.user, change.before, outcome.change) == ("carry_over", user, {"matches": []}, change)
    assert reannotation.carried_text(result) == (
        "3 matches carried over to the adjudicated pyramid; 1 match of SCUs not in it "
        "(or non-matching units) left for you: check them and mark the peer done."
    )
    again = reannotation.carry_over(assignment, peer, user).value
    assert (again.carried, again.present) == (0, 3) and len(matches(again.annotation)) == 3
    changes.undo("annotation", result.annotation.pk, user)
    assert matches(PeerAnnotation.objects.get(pk=result.annotation.pk)) == []
    old = PeerAnnotation.objects.get(peer=peer, annotator=user, pyramid=world["b"])
    assert len(matches(old)) == 4, "the earlier annotation stays as it was"


def test_the_a_side_maps_by_the_record_else_by_identical_contributors(world):
    """An annotation against ann1's pyramid (side A): SCU 2 became adjudicated SCU 2 (union_a),
    3 became 3 (B's words chosen: the same unit), 4 was dropped. Without the record's sides, only
    SCUs with identical contributors map: A's 2 (A, B) differs from the adjudicated 2 (A, B, C)."""
    assignment = world["work"]["ann4"]
    user, peer = assignment.annotator, world["topic"].peersummarys.get(external_id="3")
    source = PeerAnnotation.objects.create(peer=peer, pyramid=world["a"], annotator=user, status="done")
    PeerAnnotation.objects.filter(peer=peer, annotator=user, pyramid=world["b"]).delete()
    for uid, span in ((1, (0, 9)), (2, (14, 23)), (3, (24, 29)), (4, (30, 40))):
        add_match(source, SCU.objects.get(pyramid=world["a"], uid=uid), [span])
    record = PyramidAdjudication.objects.get()
    assert reannotation.scu_map(record, world["a"]) == {1: 1, 2: 2, 3: 3}
    assert reannotation.scu_map(record, world["b"]) == {1: 1, 2: 2, 3: 3, 5: 4}
    record.source_order = []
    record.save()
    assert reannotation.scu_map(record, world["a"]) == {1: 1}
    assert reannotation.scu_map(record, world["b"]) == {1: 1, 2: 2, 3: 3, 5: 4}
    result = reannotation.carry_over(assignment, peer, user).value
    assert (result.carried, result.left) == (1, 3) and matches(result.annotation) == [(1, ((0, 9),))]


def test_recorded_map_of_both_and_one_sided_items():
    uids = {"m1-1": 1, "m2-3": 5, "m2-3#2": 6, "a4": 7, "b9": 8}
    assert reannotation.recorded_map(uids, "a") == {1: 1, 2: 5, 4: 7}
    assert reannotation.recorded_map(uids, "b") == {1: 1, 3: 6, 9: 8}


def test_only_the_annotator_carries_over(world, client):
    assignment, other = world["work"]["ann3"], world["work"]["ann4"].annotator
    peer = world["topic"].peersummarys.get(external_id="1")
    with pytest.raises(PermissionDenied):
        reannotation.carry_over(assignment, peer, other)
    with pytest.raises(PermissionDenied):
        reannotation.carry_over(assignment, peer, world["coordinator"])
    api = APIClient()
    api.force_authenticate(other)
    assert api.post(f"/api/assignments/{assignment.pk}/peers/{peer.pk}/carry-over/").status_code == 404
    client.force_login(other)
    assert client.post(f"/assignments/{assignment.pk}/peers/{peer.pk}/carry-over/").status_code == 404
    assert not PeerAnnotation.objects.filter(pyramid=world["adjudicated"]).exists()
    assert APIClient().post(f"/api/assignments/{assignment.pk}/peers/{peer.pk}/carry-over/").status_code in (401, 403)


def test_carry_over_through_the_api_and_the_page(world, client):
    assignment = world["work"]["ann3"]
    user = assignment.annotator
    one, two = (world["topic"].peersummarys.get(external_id=p) for p in ("1", "2"))
    api = APIClient(enforce_csrf_checks=True)
    api.force_authenticate(user)
    body = api.post(f"/api/assignments/{assignment.pk}/peers/{one.pk}/carry-over/").json()
    assert (body["carried"], body["present"], body["left"]) == (3, 0, 1)
    assert body["annotation"]["pyramid"] == world["adjudicated"].pk and body["annotation"]["status"] == "in_progress"
    client.force_login(user)
    response = client.post(f"/assignments/{assignment.pk}/peers/{two.pk}/carry-over/")
    target = PeerAnnotation.objects.get(peer=two, annotator=user, pyramid=world["adjudicated"])
    assert response.status_code == 302 and response["Location"] == f"/annotations/{target.pk}/"
    assert "Peer 2: 3 matches carried over" in client.get(response["Location"]).content.decode()
    PeerAnnotation.objects.filter(annotator=user).update(status="done")  # peers 1 and 2 done again
    response = api.post(f"/api/assignments/{assignment.pk}/peers/{one.pk}/carry-over/")
    assert response.status_code == 400
    assert "no earlier annotation of yours" in response.json()["non_field_errors"][0]


def test_an_archive_keeps_which_pyramid_is_which_side(django_capture_on_commit_callbacks):
    """Adjudicated with ann2's pyramid as side A (the larger id first): the dataset archive lists
    the sources A first and its import records them so, so the copy maps the annotators' SCUs as
    the source does (ann1's SCU 2, side B, became the adjudicated SCU 2, whose contributors differ)."""
    from django.core.files.uploadedfile import SimpleUploadedFile
    from django.urls import reverse

    from annotation.adjudication import pyramids
    from annotation.corpus.models import Dataset
    from annotation.pyramids.models import Pyramid

    from tests.adjudication.pyramid_world import build

    with django_capture_on_commit_callbacks(execute=True):
        dataset, topic, a, b = build()
        coordinator = get_user_model().objects.create_user("coord")
        dataset.coordinators.add(coordinator)
        swapped = {"m2-2": "union_a", "m3-3": "b", "b4": "drop", "a5": "a"}
        pyramids.adjudicate(b, a, coordinator, swapped, pyramids.compare(b, a).token)
    record = PyramidAdjudication.objects.get(topic=topic)
    assert record.source_order == [b.pk, a.pk]
    expected = {"ann1": reannotation.scu_map(record, a), "ann2": reannotation.scu_map(record, b)}
    assert expected["ann1"][2] == 2
    api = APIClient()
    api.force_authenticate(coordinator)
    data = b"".join(api.get(reverse("api:dataset-archive", args=[dataset.pk])).streaming_content)
    copy = Dataset.objects.create(name="Copy")
    copy.coordinators.add(coordinator)
    with django_capture_on_commit_callbacks(execute=True):
        answer = api.post(
            reverse("api:dataset-import", args=[copy.pk]),  # the work attributed to the same accounts
            {"files": [SimpleUploadedFile("archive.zip", data)], "users": "\n".join(own_names(data))},
            format="multipart",
        )
    assert answer.status_code == 200 and answer.json()["pyramid_adjudications_restored"] == 1
    restored = PyramidAdjudication.objects.get(topic__dataset=copy)
    copies = {p.creator.username: p for p in Pyramid.objects.filter(topic__dataset=copy, creator__isnull=False)}
    assert restored.source_order == [copies["ann2"].pk, copies["ann1"].pk]
    assert {who: reannotation.scu_map(restored, p) for who, p in copies.items()} == expected


def test_an_adjudication_restored_from_an_archive_reopens_the_assignments(world, django_capture_on_commit_callbacks):
    """The dataset archive imported where ann3's assignment of the topic is finished and the topic not
    adjudicated (yet): restoring its adjudicated pyramid reopens the assignment, as adjudicating does."""
    from django.core.files.uploadedfile import SimpleUploadedFile
    from django.urls import reverse

    from annotation.corpus.models import Dataset

    coordinator = world["coordinator"]
    api = APIClient()
    api.force_authenticate(coordinator)
    data = b"".join(api.get(reverse("api:dataset-archive", args=[world["dataset"].pk])).streaming_content)
    copy = Dataset.objects.create(name="Copy")
    copy.coordinators.add(coordinator)

    def upload():
        with django_capture_on_commit_callbacks(execute=True):
            answer = api.post(
                reverse("api:dataset-import", args=[copy.pk]),
                {"files": [SimpleUploadedFile("archive.zip", data)], "users": "\n".join(own_names(data))},
                format="multipart",
            )
        assert answer.status_code == 200, answer.content
        return answer.json()

    upload()
    PyramidAdjudication.objects.filter(topic__dataset=copy).delete()
    topic = copy.topics.get()
    assignment = topic.assignments.create(
        annotator=world["work"]["ann3"].annotator, task="annotate_peers", status="done"
    )
    assert upload()["pyramid_adjudications_restored"] == 1
    assignment.refresh_from_db()
    assert assignment.status == "in_progress" and [r.peer for r in reannotation.for_assignment(assignment)] == [
        "1",
        "2",
        "3",
    ]
