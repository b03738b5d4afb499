"""The pyramid adjudication page: coordinators of the dataset only (annotators, the builders of
the two pyramids included, and other datasets' coordinators get a 404; anonymous users the login
page), CSRF on the save, decisions kept on the page, text escaped, the construction page linking
to it, and the adjudicated pyramid invisible to pyramid builders through the API."""

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from annotation.adjudication import pyramids
from annotation.adjudication.models import PyramidAdjudication
from annotation.corpus.models import Dataset
from annotation.corpus.roles import ANNOTATOR, COORDINATOR, role_group
from annotation.pyramids.models import SCU, Pyramid

from tests.adjudication.pyramid_world import build, content
from tests.adjudication.test_pyramids import DECISIONS, EXPECTED

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        dataset, topic, a, b = build()
    User = get_user_model()
    coordinator = User.objects.create_user("coord")
    coordinator.groups.add(role_group(COORDINATOR))
    dataset.coordinators.add(coordinator)
    other = User.objects.create_user("other")
    other.groups.add(role_group(COORDINATOR))
    Dataset.objects.create(name="Other").coordinators.add(other)
    for name in ("ann1", "ann2"):
        User.objects.get(username=name).groups.add(role_group(ANNOTATOR))
    url = reverse("dashboards:adjudicate_pyramids", args=[dataset.pk, "T1", a.pk, b.pk])
    return dataset, topic, a, b, {"coord": coordinator, "other": other}, url


def client_of(user, **kwargs):
    client = Client(**kwargs)
    client.force_login(user)
    return client


def form(comparison, decisions=DECISIONS):
    return {"token": comparison.token} | {f"decision-{k}": v for k, v in decisions.items()}


def test_only_the_datasets_coordinators_open_or_post(world):
    dataset, topic, a, b, users, url = world
    anonymous = Client().get(url)
    assert anonymous.status_code == 302 and anonymous["Location"].startswith(reverse("login"))
    data = form(pyramids.compare(a, b))
    User = get_user_model()
    for outsider in (User.objects.get(username="ann1"), User.objects.get(username="ann2"), users["other"]):
        assert client_of(outsider).get(url).status_code == 404, outsider
        assert client_of(outsider).post(url, data).status_code == 404, outsider
    assert not PyramidAdjudication.objects.exists()
    assert client_of(users["coord"]).get(url).status_code == 200
    # Pyramids of another topic, the same pyramid twice, an unfinished one: nothing to adjudicate.
    for pair in ((a.pk, a.pk), (a.pk, 999999)):
        assert (
            client_of(users["coord"])
            .get(reverse("dashboards:adjudicate_pyramids", args=[dataset.pk, "T1", *pair]))
            .status_code
            == 404
        )
    Pyramid.objects.filter(pk=b.pk).update(status="in_progress")
    assert client_of(users["coord"]).get(url).status_code == 404


def test_page_shows_the_differences_side_by_side(world):
    _, _, a, b, users, url = world
    page = client_of(users["coord"]).get(url).content.decode()
    for key, kind in (("m2-2", "matched"), ("m3-3", "matched"), ("a4", "only_a"), ("b5", "only_b")):
        assert f'data-item="{key}" data-kind="{kind}"' in page
    assert 'data-agreed="m1-1"' in page and 'data-item="m1-1"' not in page
    assert "dogs are barking" in page and "dogs bark" in page
    assert 'data-differs="only_b"' in page and 'data-differs="parts"' in page
    assert "<q>c001xxxxx</q>" in page, "the words of reference C that only B's SCU 2 has are quoted"
    assert 'value="union_b"' in page and "A&#x27;s label, contributors of both" in page


def test_save_needs_csrf_and_every_decision(world, django_capture_on_commit_callbacks):
    _, topic, a, b, users, url = world
    data = form(pyramids.compare(a, b))
    assert client_of(users["coord"], enforce_csrf_checks=True).post(url, data).status_code == 403
    coordinator = client_of(users["coord"])
    incomplete = coordinator.post(
        url, {k: v for k, v in data.items() if k != "decision-b5"}, follow=True
    ).content.decode()
    assert "Decide every disagreement first (still open: B&#x27;s SCU 5)" in incomplete
    assert 'name="decision-m2-2" value="union_a" required checked' in incomplete, "what was decided is kept on the page"
    assert not PyramidAdjudication.objects.exists()
    with django_capture_on_commit_callbacks(execute=True):
        saved = coordinator.post(url, data)
    assert saved.status_code == 302 and saved["Location"] == url
    adjudicated = PyramidAdjudication.objects.get(topic=topic).pyramid
    assert content(adjudicated) == EXPECTED
    page = coordinator.get(url).content.decode()
    assert f"Adjudicated pyramid #{adjudicated.pk} saved" in page and "data-adjudicated-state><strong>#" in page
    assert 'name="decision-m3-3" value="b" required checked' in page, "the saved decisions are shown again"
    assert "data-changed-sources" not in page
    SCU.objects.filter(pyramid=a, uid=3).update(label="birds are singing")
    from annotation.peers.score_events import touch_pyramid

    touch_pyramid(a.pk, topic.pk)
    assert "data-changed-sources" in coordinator.get(url).content.decode()


def test_text_is_escaped(world):
    _, _, a, b, users, url = world
    SCU.objects.filter(pyramid=a, uid=4).update(label='<script>alert("scu")</script>')
    page = client_of(users["coord"]).get(url).content.decode()
    assert '<script>alert("scu")' not in page and "&lt;script&gt;alert(&quot;scu&quot;)" in page


def test_construction_page_links_to_it_and_builders_never_see_the_result(world, django_capture_on_commit_callbacks):
    dataset, topic, a, b, users, url = world
    coordinator = client_of(users["coord"])
    construction = reverse("dashboards:construction_topic", args=[dataset.pk, "T1"])
    assert f'href="{url}"' in coordinator.get(construction, {"pair": f"{a.pk}-{b.pk}"}).content.decode()
    with django_capture_on_commit_callbacks(execute=True):
        coordinator.post(url, form(pyramids.compare(a, b)))
    adjudicated = PyramidAdjudication.objects.get(topic=topic).pyramid
    assert f"Adjudicated pyramid #{adjudicated.pk}" in coordinator.get(construction).content.decode()
    for name, own in (("ann1", a), ("ann2", b)):  # they build pyramids of the topic: they see their own only
        api = APIClient()
        api.force_authenticate(get_user_model().objects.get(username=name))
        assert {p["id"] for p in api.get(reverse("api:pyramid-list")).json()["results"]} == {own.pk}
        assert api.get(reverse("api:pyramid-detail", args=[adjudicated.pk])).status_code == 404
    api = APIClient()
    api.force_authenticate(users["coord"])
    assert api.get(reverse("api:pyramid-detail", args=[adjudicated.pk])).status_code == 200
