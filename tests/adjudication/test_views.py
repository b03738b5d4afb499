"""The adjudication page: coordinators of the dataset only (everyone else a 404, as for a peer that
does not exist; anonymous users the login page), CSRF on the save, text escaped, and the
adjudicated version invisible to annotators through the API as well."""

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from annotation.adjudication import services
from annotation.corpus.models import Assignment
from annotation.peers.editing import add_match
from annotation.peers.models import PeerAnnotation
from annotation.pyramids.models import SCU

from tests.adjudication.world import build, versions

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        dataset, users, peer, pyramid = build()
        for name in ("ann1", "ann2"):  # the annotators are assigned to the topic, as in real work
            Assignment.objects.create(
                topic=peer.topic, annotator=get_user_model().objects.get(username=name), task="annotate_peers"
            )
    url = reverse("dashboards:adjudicate", args=[dataset.pk, "T1", "1", pyramid.pk])
    return dataset, users, peer, pyramid, url


def client_of(user, **kwargs):
    client = Client(**kwargs)
    client.force_login(user)
    return client


def form(comparison, **choices):
    ids = {s.annotator: str(s.pk) for s in comparison.sources}
    return {"token": comparison.token} | {f"decision-{k}": ids.get(v, v) for k, v in choices.items()}


def test_only_the_datasets_coordinators_open_or_post(world):
    dataset, users, peer, pyramid, url = world
    anonymous = Client().get(url)
    assert anonymous.status_code == 302 and anonymous["Location"].startswith(reverse("login"))
    assert Client().post(url, {}).status_code == 302
    ann2 = get_user_model().objects.get(username="ann2")
    data = form(services.compare(peer, pyramid), **{"3": "ann1", "4": "both", "non_matching": "neither"})
    for outsider in (users["annotator"], ann2, users["other"]):
        assert client_of(outsider).get(url).status_code == 404, outsider
        assert client_of(outsider).post(url, data).status_code == 404, outsider
    assert not PeerAnnotation.objects.filter(annotator__isnull=True).exists()
    for coordinator in (users["coord"], users["root"]):
        assert client_of(coordinator).get(url).status_code == 200
    # A peer annotated once, or a pyramid of another topic, has nothing to adjudicate.
    single = reverse("dashboards:adjudicate", args=[dataset.pk, "T2", "1", pyramid.pk])
    assert client_of(users["coord"]).get(single).status_code == 404


def test_save_needs_csrf_and_every_decision(world):
    dataset, users, peer, pyramid, url = world
    data = form(services.compare(peer, pyramid), **{"3": "ann1", "4": "both", "non_matching": "neither"})
    assert client_of(users["coord"], enforce_csrf_checks=True).post(url, data).status_code == 403
    coordinator = client_of(users["coord"])
    incomplete = coordinator.post(url, {k: v for k, v in data.items() if k != "decision-4"}, follow=True)
    assert "Decide every disagreement first" in incomplete.content.decode()
    assert not PeerAnnotation.objects.filter(annotator__isnull=True).exists()
    saved = coordinator.post(url, data)
    assert saved.status_code == 302 and saved["Location"] == url
    page = coordinator.get(url).content.decode()
    assert "Adjudicated version saved" in page and "data-adjudicated-score" in page
    assert 'value="both" required checked' in page, "the saved decisions are shown again"
    assert "data-changed-sources" not in page
    # ann2 changes their version afterwards: the page says so (the scores keep resting on the adjudicated one).
    add_match(versions(peer, pyramid)["ann2"], SCU.objects.get(pyramid=pyramid, uid=2), [(30, 34)])
    page = coordinator.get(url).content.decode()
    assert "data-changed-sources>ann2 changed their version since" in page


def test_text_is_escaped(world):
    _, users, peer, pyramid, url = world
    SCU.objects.filter(pyramid=pyramid, uid=3).update(label='<script>alert("scu")</script>')
    page = client_of(users["coord"]).get(url).content.decode()
    assert '<script>alert("scu")' not in page and "&lt;script&gt;alert(&quot;scu&quot;)" in page


def test_annotators_never_see_the_adjudicated_version(world, django_capture_on_commit_callbacks):
    _, users, peer, pyramid, url = world
    comparison = services.compare(peer, pyramid)
    with django_capture_on_commit_callbacks(execute=True):
        version = services.adjudicate(
            peer,
            pyramid,
            users["coord"],
            {
                k.removeprefix("decision-"): v
                for k, v in form(comparison, **{"3": "ann1", "4": "both", "non_matching": "neither"}).items()
                if k != "token"
            },
            comparison.token,
        )
    for name in ("ann1", "ann2"):
        annotator = get_user_model().objects.get(username=name)
        api = APIClient()
        api.force_authenticate(annotator)
        listed = {a["id"] for a in api.get(reverse("api:annotation-list"), {"page_size": 100}).json()["results"]}
        assert listed == {versions(peer, pyramid)[name].pk} | set(
            PeerAnnotation.objects.filter(annotator__username=name, pyramid__topic=peer.topic)
            .exclude(peer=peer)
            .values_list("pk", flat=True)
        )
        assert version.pk not in listed
        assert api.get(reverse("api:annotation-detail", args=[version.pk])).status_code == 404
        assert client_of(annotator).get(reverse("frontend:annotator", args=[version.pk])).status_code == 404
    coordinator = APIClient()
    coordinator.force_authenticate(users["coord"])
    assert coordinator.get(reverse("api:annotation-detail", args=[version.pk])).status_code == 200
    assert client_of(users["coord"]).get(reverse("frontend:annotator", args=[version.pk])).status_code == 200, (
        "the coordinator may open the adjudicated version in the editor (it has no annotator)"
    )


def test_pages_state_which_version_scores_rest_on(world, django_capture_on_commit_callbacks):
    dataset, users, peer, pyramid, url = world
    comparison = services.compare(peer, pyramid)
    coordinator = client_of(users["coord"])
    peer_page = reverse("dashboards:agreement_peer", args=[dataset.pk, "T1", "1"])
    assert "Adjudicate the disagreements" in coordinator.get(peer_page).content.decode()
    with django_capture_on_commit_callbacks(execute=True):
        coordinator.post(url, form(comparison, **{"3": "ann1", "4": "both", "non_matching": "neither"}))
    assert "Review the adjudication" in coordinator.get(peer_page).content.decode()
    scores = coordinator.get(reverse("dashboards:scores", args=[dataset.pk])).content.decode()
    assert 'data-version="adjudicated"' in scores and "data-version-note" in scores
    csv = coordinator.get(reverse("dashboards:scores_export", args=[dataset.pk, "csv"])).content.decode().splitlines()
    column = csv[0].split(",").index("version")
    assert [line.split(",")[column] for line in csv[1:] if line.split(",")[1:3] == ["T1", "1"]] == ["adjudicated"]
    api = APIClient()
    api.force_authenticate(users["coord"])
    rows = api.get(reverse("api:dataset-scores", args=[dataset.pk]), {"format": "json"}).json()
    assert [r["version"] for r in rows if (r["topic"], r["summary"], r["kind"]) == ("T1", "1", "peer")] == [
        "adjudicated"
    ]
