"""Issue 30 §3: the reviewed suggestions accepted with one key are one action (POST
/api/matches/accept/): one revision, one undo step, all written or none; the first write of an
untouched peer may create the annotation with them, as a single match does, and the assignment of
anyone else is a 404 (blind)."""

from django.contrib.auth.models import User

from annotation.history.models import Change
from annotation.peers.models import PeerAnnotation, PeerMatch
from annotation.pyramids.models import SCU

from tests.corpus.test_untouched_peers import api, topic_world  # noqa: F401 (a fixture)

URL = "/api/matches/accept/"


def stored(annotation=None):
    matches = PeerMatch.objects.filter(**({"annotation": annotation} if annotation else {}))
    return sorted((m.scu_id or 0, tuple((p.start, p.end) for p in m.parts.order_by("start"))) for m in matches)


def accept_body(w, peer="2", **extra):
    valley = SCU.objects.exclude(pk=w["dam"].pk).get(pyramid=w["pyramid"])
    return {
        "assignment": w["assignment"].pk,
        "peer": w["peers"][peer].pk,
        "matches": [
            {"scu": w["dam"].pk, "parts": [{"start": 5, "end": 29}]},
            {"scu": valley.pk, "parts": [{"start": 0, "end": 4}]},
        ],
        **extra,
    }, valley


def test_accepting_several_is_one_action_and_one_undo(topic_world):  # noqa: F811  (the imported fixture)
    w = topic_world
    client = api(w)
    body, valley = accept_body(w)
    answer = client.post(URL, body, format="json", HTTP_IF_MATCH='"0"')
    assert answer.status_code == 201, answer.content
    annotation = PeerAnnotation.objects.get()
    assert stored() == sorted([(w["dam"].pk, ((5, 29),)), (valley.pk, ((0, 4),))])
    data = answer.json()
    assert data["annotation"] == annotation.pk and data["revision"] == annotation.revision == 1
    assert answer["ETag"] == '"1"'
    # The ids in the order given, and the delta is every match of the annotation.
    made = {m.pk: m.scu_id for m in PeerMatch.objects.all()}
    assert [made[i] for i in data["ids"]] == [w["dam"].pk, valley.pk]
    assert sorted(m["id"] for m in data["delta"]["matches"]) == sorted(made)
    assert Change.objects.filter(annotation=annotation).count() == 1
    # A later single match, then one undo removes only it; a second undo removes both accepted at once.
    single = client.post(
        "/api/matches/",
        {"annotation": annotation.pk, "scu": None, "parts": [{"start": 9, "end": 12}]},
        format="json",
        HTTP_IF_MATCH='"1"',
    )
    assert single.status_code == 201 and len(stored()) == 3
    undo = f"/api/annotations/{annotation.pk}/undo/"
    assert client.post(undo, {}, format="json", HTTP_IF_MATCH='"2"').status_code == 200 and len(stored()) == 2
    assert client.post(undo, {}, format="json", HTTP_IF_MATCH='"3"').status_code == 200 and stored() == []
    redo = client.post(f"/api/annotations/{annotation.pk}/redo/", {}, format="json", HTTP_IF_MATCH='"4"')
    assert redo.status_code == 200 and len(stored()) == 2


def test_a_refused_accept_stores_nothing(topic_world):  # noqa: F811  (the imported fixture)
    w = topic_world
    client = api(w)
    body, _ = accept_body(w)
    body["matches"][1]["parts"] = [{"start": 0, "end": 400}]  # beyond the peer's text
    answer = client.post(URL, body, format="json", HTTP_IF_MATCH='"0"')
    assert answer.status_code == 400 and "match 2" in answer.content.decode()
    other_pyramid_scu = SCU.objects.create(pyramid=_other_pyramid(w), uid=99, label="elsewhere")
    body, _ = accept_body(w)
    body["matches"][1]["scu"] = other_pyramid_scu.pk
    assert client.post(URL, body, format="json", HTTP_IF_MATCH='"0"').status_code == 400
    body, _ = accept_body(w)
    assert client.post(URL, body, format="json").status_code == 428  # no If-Match
    assert PeerAnnotation.objects.count() == 0 and PeerMatch.objects.count() == 0
    # Another annotator cannot write into this assignment: 404, nothing stored.
    stranger = User.objects.create_user("stranger")
    assert api(w, stranger).post(URL, body, format="json", HTTP_IF_MATCH='"0"').status_code == 404
    assert PeerAnnotation.objects.count() == 0
    # A stale revision once the annotation exists: 409, nothing added.
    assert client.post(URL, body, format="json", HTTP_IF_MATCH='"0"').status_code == 201
    annotation = PeerAnnotation.objects.get()
    again = {"annotation": annotation.pk, "matches": body["matches"][:1]}
    assert client.post(URL, again, format="json", HTTP_IF_MATCH='"0"').status_code == 409
    assert len(stored()) == 2
    assert client.post(URL, {**again, "matches": []}, format="json", HTTP_IF_MATCH='"1"').status_code == 400


def _other_pyramid(w):
    from annotation.pyramids.models import Pyramid

    return Pyramid.objects.create(topic=w["topic"], creator=User.objects.create_user("other-builder"))
