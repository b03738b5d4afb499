"""Issue 21, the first write of an untouched peer in one request: a match (or a non-matching unit)
naming the assignment and peer creates the annotation with it, in one transaction; "Done" on an
untouched peer creates it finished. Every guarantee of the two requests it replaces holds: created
once (unique constraint, Idempotency-Key), a stale read gets a conflict, blind (404 for anyone
else's assignment), and a refused write stores nothing, not even the annotation."""

from django.contrib.auth.models import User

from annotation.corpus.models import Assignment
from annotation.peers import assignments, results
from annotation.peers.models import PeerAnnotation, PeerMatch

from tests.corpus.test_untouched_peers import api, start_url, topic_world  # noqa: F401 (a fixture)


def first_write(w, peer="2", scu="dam", **extra):
    return {
        "assignment": w["assignment"].pk,
        "peer": w["peers"][peer].pk,
        "scu": w[scu].pk if scu else None,
        "parts": [{"start": 5, "end": 29}],
        **extra,
    }


def post(client, body, revision="0", **headers):
    return client.post("/api/matches/", body, format="json", HTTP_IF_MATCH=f'"{revision}"', **headers)


def test_the_first_match_creates_the_annotation_in_the_same_request(topic_world):  # noqa: F811  (the imported fixture)
    w = topic_world
    client = api(w)
    first = post(client, first_write(w), HTTP_IDEMPOTENCY_KEY="k1")
    assert first.status_code == 201, first.content
    annotation = PeerAnnotation.objects.get()
    assert (annotation.peer.external_id, annotation.annotator, annotation.pyramid, annotation.status) == (
        "2",
        w["user"],
        w["pyramid"],
        "in_progress",
    )
    match = PeerMatch.objects.get()
    assert (
        match.annotation == annotation
        and match.scu == w["dam"]
        and [(p.start, p.end) for p in match.parts.all()] == [(5, 29)]
    )
    body = first.json()
    assert (
        body["annotation"] == annotation.pk and body["revision"] == annotation.revision == 1 and first["ETag"] == '"1"'
    )
    assert "assignment" not in body and "peer" not in body  # the answer is the match as a read shows it
    assert Assignment.objects.get(pk=w["assignment"].pk).status == Assignment.Status.IN_PROGRESS
    replay = post(client, first_write(w), HTTP_IDEMPOTENCY_KEY="k1")  # a retry after a lost answer
    assert replay["Idempotent-Replayed"] == "true" and replay.json()["id"] == match.pk
    # Another tab read the peer untouched (revision 0): its first write is a conflict, not a second annotation.
    other_tab = post(client, first_write(w, scu=None), HTTP_IDEMPOTENCY_KEY="k2")
    assert other_tab.status_code == 409 and other_tab.json()["revision"] == 1
    assert PeerAnnotation.objects.count() == 1 and PeerMatch.objects.count() == 1
    # The page's next writes name the annotation, at the revision the first answered.
    second = post(client, {"annotation": annotation.pk, "scu": None, "parts": [{"start": 0, "end": 4}]}, revision=1)
    assert second.status_code == 201 and second.json()["revision"] == 2
    assert not results.counted(PeerAnnotation.objects.all()).exists()  # unfinished: counted nowhere


def test_a_first_non_matching_unit_creates_the_annotation(topic_world):  # noqa: F811  (the imported fixture)
    w = topic_world
    response = post(api(w), first_write(w, peer="10", scu=None, parts=[{"start": 5, "end": 27}]))
    assert response.status_code == 201, response.content
    match = PeerMatch.objects.get()
    assert (
        match.scu is None
        and match.annotation.peer.external_id == "10"
        and response.json()["annotation"] == match.annotation_id
    )


def test_a_refused_first_write_stores_nothing(topic_world):  # noqa: F811  (the imported fixture)
    w = topic_world
    client = api(w)
    refused = {
        "parts outside the peer": (first_write(w, parts=[{"start": 5, "end": 500}]), "0", 400),
        "a stale revision": (first_write(w), "3", 409),
        "no If-Match": (first_write(w), None, 428),
        "annotation and place": (first_write(w, annotation=0), "0", 400),
        "no peer": ({k: v for k, v in first_write(w).items() if k != "peer"}, "0", 400),
        "a peer of no topic of the assignment": (first_write(w, peer="2") | {"peer": 10**6}, "0", 404),
    }
    for what, (body, revision, expected) in refused.items():
        response = client.post(
            "/api/matches/", body, format="json", **({"HTTP_IF_MATCH": f'"{revision}"'} if revision else {})
        )
        assert response.status_code == expected, (what, response.content)
    assert PeerAnnotation.objects.count() == 0 and PeerMatch.objects.count() == 0
    assert Assignment.objects.get(pk=w["assignment"].pk).status == Assignment.Status.ASSIGNED


def test_only_the_assignments_annotator_writes_first(topic_world):  # noqa: F811  (the imported fixture)
    """Blind annotation: another annotator of the topic and its coordinator get the 404 of an
    assignment that does not exist, and nothing is stored."""
    w = topic_world
    quinn = User.objects.create_user("quinn")
    Assignment.objects.create(topic=w["topic"], annotator=quinn, task=Assignment.Task.ANNOTATE_PEERS)
    coordinator = User.objects.create_user("coord")
    w["topic"].dataset.coordinators.add(coordinator)
    for user in (quinn, coordinator):
        assert post(api(w, user), first_write(w)).status_code == 404
        assert api(w, user).post(start_url(w, "2"), {"status": "done"}, format="json").status_code == 404
    build = Assignment.objects.create(topic=w["topic"], annotator=w["user"], task=Assignment.Task.BUILD_PYRAMID)
    assert post(api(w), first_write(w) | {"assignment": build.pk}).status_code == 404
    assert PeerAnnotation.objects.count() == 0


def test_done_on_an_untouched_peer_in_one_request(topic_world):  # noqa: F811  (the imported fixture)
    w = topic_world
    client = api(w)
    done = client.post(start_url(w, "1"), {"status": "done"}, format="json", HTTP_IDEMPOTENCY_KEY="d1")
    assert done.status_code == 201, done.content
    annotation = PeerAnnotation.objects.get()
    assert done.json()["id"] == annotation.pk and annotation.status == "done" and not annotation.matches.exists()
    assert list(results.counted(PeerAnnotation.objects.all())) == [annotation]
    assert assignments.progress(w["assignment"]).text == "1 of 3 peers done"
    assert client.post(start_url(w, "2"), {"status": "finished"}, format="json").status_code == 400
    assert client.post(start_url(w, "2"), {"source": "import"}, format="json").status_code == 400
    assert PeerAnnotation.objects.count() == 1
