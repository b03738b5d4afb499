"""Issue 21: an untouched peer never becomes an annotation. Opening peers (home page, "Done, next
peer", a peer named in the form) stores no PeerAnnotation; the first action creates it, once,
whatever the number of tabs acting at once (PostgreSQL, threads released together); only the
assignment's annotator may see or start it; progress and the walk to the next peer stay right."""

import threading

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from annotation.corpus.models import Assignment, PeerSummary, Topic
from annotation.peers import assignments, results
from annotation.peers.models import PeerAnnotation

from tests.browser.editors.browser import world
from tests.browser.editors.test_annotator import build_pyramid


@pytest.fixture
def topic_world(db):
    user, topic = world("pat", tasks=("annotate_peers",))
    pyramid, dam, valley = build_pyramid(topic, User.objects.create_user("builder"))
    for pid, text in [("2", "Two: the dam failed at night."), ("10", "Ten: the valley was flooded.")]:
        PeerSummary.objects.create(topic=topic, external_id=pid, text=text)
    assignment = Assignment.objects.get(annotator=user)
    client = Client()
    client.force_login(user)
    return {
        "user": user,
        "topic": topic,
        "pyramid": pyramid,
        "dam": dam,
        "assignment": assignment,
        "client": client,
        "peers": {p.external_id: p for p in topic.peersummarys.all()},
    }


def peer_url(w, peer):
    return reverse("frontend:annotator-peer", args=[w["assignment"].pk, w["peers"][peer].pk])


def api(w, user=None) -> APIClient:
    client = APIClient()
    client.force_authenticate(user or w["user"])
    return client


def start_url(w, peer):
    return f"/api/assignments/{w['assignment'].pk}/peers/{w['peers'][peer].pk}/annotation/"


def test_opening_peers_stores_nothing(topic_world):
    w, client = topic_world, topic_world["client"]
    response = client.post(reverse("frontend:open-assignment", args=[w["assignment"].pk]))  # the home page's Start
    assert response.status_code == 302 and response["Location"] == peer_url(w, "1")  # the first peer, natural order
    for peer in ("2", "10"):  # the peer list's form
        response = client.post(
            reverse("frontend:open-assignment", args=[w["assignment"].pk]), {"peer": w["peers"][peer].pk}
        )
        assert response["Location"] == peer_url(w, peer)
    for peer in ("1", "2", "10", "1"):  # each page, and its document
        page = client.get(peer_url(w, peer))
        assert page.status_code == 200 and f"peer {peer}</h1>" in page.content.decode()
        full = client.get(f"/api/assignments/{w['assignment'].pk}/peers/{w['peers'][peer].pk}/full/")
        assert full.status_code == 200
        doc = full.json()
        assert doc["id"] is None and doc["matches"] == [] and doc["can_edit"] is True
        assert doc["peer"]["text"] == w["peers"][peer].text and len(doc["pyramid"]["scus"]) == 2
        assert doc["progress"] == {"done": 0, "total": 3}
        assert doc["next"]["annotation"] is None and doc["next"]["peer"] != peer
        suggestions = client.get(f"/api/assignments/{w['assignment'].pk}/peers/{w['peers'][peer].pk}/suggestions/")
        assert suggestions.status_code == 200 and isinstance(suggestions.json()["suggestions"], list)
    assert PeerAnnotation.objects.count() == 0
    assert assignments.progress(w["assignment"]).text == "0 of 3 peers done"


def test_the_first_action_creates_the_annotation_once(topic_world):
    w = topic_world
    client = api(w)
    first = client.post(start_url(w, "2"), {}, format="json", HTTP_IDEMPOTENCY_KEY="k1")
    assert first.status_code == 201
    annotation = PeerAnnotation.objects.get()
    assert (annotation.peer.external_id, annotation.annotator, annotation.pyramid, annotation.status) == (
        "2",
        w["user"],
        w["pyramid"],
        "in_progress",
    )
    assert first.json()["id"] == annotation.pk and first.json()["revision"] == 0
    replay = client.post(start_url(w, "2"), {}, format="json", HTTP_IDEMPOTENCY_KEY="k1")  # a retry of the same action
    assert replay.json()["id"] == annotation.pk and replay["Idempotent-Replayed"] == "true"
    other_tab = client.post(
        start_url(w, "2"), {}, format="json", HTTP_IDEMPOTENCY_KEY="k2"
    )  # another tab's first action
    assert other_tab.status_code == 200 and other_tab.json()["id"] == annotation.pk
    match = client.post(
        "/api/matches/",
        {"annotation": annotation.pk, "scu": w["dam"].pk, "parts": [{"start": 5, "end": 29}]},
        format="json",
        HTTP_IF_MATCH='"0"',
    )
    assert match.status_code == 201, match.content
    assert PeerAnnotation.objects.count() == 1
    # The page of that peer now leads to its annotation; the document of the peer is the annotation's.
    page = w["client"].get(peer_url(w, "2"))
    assert page.status_code == 302 and page["Location"] == reverse("frontend:annotator", args=[annotation.pk])
    doc = w["client"].get(f"/api/assignments/{w['assignment'].pk}/peers/{w['peers']['2'].pk}/full/").json()
    assert doc["id"] == annotation.pk and len(doc["matches"]) == 1
    # Unfinished: not counted; the walk from the first peer names it as existing.
    assert assignments.progress(w["assignment"]).done == 0
    assert not results.counted(PeerAnnotation.objects.all()).exists()
    walk = w["client"].get(f"/api/assignments/{w['assignment'].pk}/peers/{w['peers']['1'].pk}/full/").json()["next"]
    assert walk == {
        "assignment": w["assignment"].pk,
        "peer": "2",
        "peer_id": w["peers"]["2"].pk,
        "annotation": annotation.pk,
    }


def test_done_on_an_untouched_peer_is_a_finished_empty_annotation(topic_world):
    """What "Done" with nothing matched meant before: a finished annotation with no match (score 0)."""
    w = topic_world
    client = api(w)
    annotation_id = client.post(start_url(w, "1"), {}, format="json").json()["id"]
    done = client.patch(f"/api/annotations/{annotation_id}/", {"status": "done"}, format="json")
    assert done.status_code == 200, done.content
    annotation = PeerAnnotation.objects.get()
    assert annotation.status == "done" and not annotation.matches.exists()
    assert list(results.counted(PeerAnnotation.objects.all())) == [annotation]
    assert assignments.progress(w["assignment"]).text == "1 of 3 peers done"
    # The next peer opened from home is the first not done: 2 (natural order), still no row for it.
    response = w["client"].post(reverse("frontend:open-assignment", args=[w["assignment"].pk]))
    assert response["Location"] == peer_url(w, "2") and PeerAnnotation.objects.count() == 1


def test_only_the_assignments_annotator_may_open_or_start(topic_world):
    w = topic_world
    quinn = User.objects.create_user("quinn")
    Assignment.objects.create(
        topic=w["topic"], annotator=quinn, task=Assignment.Task.ANNOTATE_PEERS
    )  # same topic, own assignment
    coordinator = User.objects.create_user("coord")
    w["topic"].dataset.coordinators.add(coordinator)
    peer = w["peers"]["1"].pk
    for user in (quinn, coordinator):
        client = Client()
        client.force_login(user)
        assert client.get(peer_url(w, "1")).status_code == 404
        assert client.post(reverse("frontend:open-assignment", args=[w["assignment"].pk])).status_code == 404
        for path in ("full", "suggestions"):
            assert api(w, user).get(f"/api/assignments/{w['assignment'].pk}/peers/{peer}/{path}/").status_code == 404
        assert api(w, user).post(start_url(w, "1"), {}, format="json").status_code == 404
    anonymous = Client().get(peer_url(w, "1"))
    assert anonymous.status_code == 302 and "/accounts/login/" in anonymous["Location"]
    # A peer of another topic, through this assignment: 404.
    elsewhere = Topic.objects.create(dataset=w["topic"].dataset, external_id="T10")
    stranger = PeerSummary.objects.create(topic=elsewhere, external_id="1", text="Elsewhere.").pk
    assert w["client"].get(reverse("frontend:annotator-peer", args=[w["assignment"].pk, stranger])).status_code == 404
    assert (
        api(w)
        .post(f"/api/assignments/{w['assignment'].pk}/peers/{stranger}/annotation/", {}, format="json")
        .status_code
        == 404
    )
    # A build assignment has no peers to annotate.
    build = Assignment.objects.create(topic=w["topic"], annotator=w["user"], task=Assignment.Task.BUILD_PYRAMID)
    assert w["client"].get(reverse("frontend:annotator-peer", args=[build.pk, peer])).status_code == 404
    assert api(w).post(f"/api/assignments/{build.pk}/peers/{peer}/annotation/", {}, format="json").status_code == 404
    assert PeerAnnotation.objects.count() == 0


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_two_tabs_acting_at_once_create_one_annotation():
    """PostgreSQL, two threads released together, each its own connection and its own key."""
    w = {}
    user, topic = world("pat", tasks=("annotate_peers",))
    build_pyramid(topic, User.objects.create_user("builder"))
    w.update(
        user=user,
        assignment=Assignment.objects.get(annotator=user),
        peers={p.external_id: p for p in topic.peersummarys.all()},
    )
    for attempt in range(3):
        PeerAnnotation.objects.all().delete()
        barrier, answers = threading.Barrier(2), [None, None]

        def run(i, barrier=barrier, answers=answers, attempt=attempt):
            try:
                client = api(w)
                barrier.wait()
                answers[i] = client.post(start_url(w, "1"), {}, format="json", HTTP_IDEMPOTENCY_KEY=f"tab{i}-{attempt}")
            finally:
                connection.close()

        threads = [threading.Thread(target=run, args=(i,)) for i in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        assert sorted(a.status_code for a in answers) in ([200, 201], [201, 201]), [a.content for a in answers]
        assert PeerAnnotation.objects.count() == 1
        assert {a.json()["id"] for a in answers} == {PeerAnnotation.objects.get().pk}
