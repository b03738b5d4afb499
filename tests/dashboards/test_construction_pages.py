"""Pyramid construction agreement on the pages, in the downloads and in the API: who may see it,
what it shows (the hand-worked topic of ``tests/pyramids/construction_world``), escaping, and the
blind rule (builders never see each other's pyramids)."""

import csv
import io
import json

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from annotation.api.downloads import app_version
from annotation.corpus.models import Dataset, Topic
from annotation.corpus.roles import COORDINATOR, role_group
from annotation.pyramids.models import SCU, Pyramid, PyramidAgreement

from tests.pyramids import construction_world as world

pytestmark = pytest.mark.django_db
HOSTILE = '<script>alert("x")</script>'


@pytest.fixture
def setup(django_capture_on_commit_callbacks, in_process_jobs):
    with django_capture_on_commit_callbacks(execute=True):
        dataset = world.build()
        SCU.objects.filter(pyramid__creator__username="builder1", uid=3).update(label=HOSTILE)  # no score changes
    User = get_user_model()
    coord = User.objects.create_user("coord")
    coord.groups.add(role_group(COORDINATOR))
    dataset.coordinators.add(coord)
    other = User.objects.create_user("other")
    other.groups.add(role_group(COORDINATOR))
    Dataset.objects.create(name="Elsewhere").coordinators.add(other)
    users = {name: User.objects.get(username=name) for name in ("builder1", "builder2", "reader")} | {
        "coord": coord,
        "other": other,
    }
    return dataset, users


def client(user, api=False):
    c = APIClient() if api else Client()
    if user is not None:
        c.force_login(user)
    return c


def urls(dataset):
    d = dataset.pk
    return [
        reverse("dashboards:agreement", args=[d]),
        reverse("dashboards:construction_topic", args=[d, "T"]),
        reverse("dashboards:construction_export", args=[d, "csv"]),
    ]


def test_only_the_datasets_coordinators_see_the_pages_and_downloads(setup):
    dataset, users = setup
    for url in urls(dataset):
        assert client(None).get(url).status_code == 302, url  # to the login page
        assert client(users["builder1"]).get(url).status_code == 403, url
        assert client(users["other"]).get(url).status_code == 404, url
        assert client(users["coord"]).get(url).status_code == 200, url


def test_the_agreement_page_shows_each_pair_with_its_figures(setup):
    dataset, users = setup
    html = client(users["coord"]).get(reverse("dashboards:agreement", args=[dataset.pk])).content.decode()
    p1, p2 = Topic.objects.get(dataset=dataset).pyramids.order_by("pk")
    assert f'data-construction-pair="T:{p1.pk}-{p2.pk}"' in html
    row = html.split(f'data-construction-pair="T:{p1.pk}-{p2.pk}"')[1].split("</tr>")[0]
    assert "0.500 / 0.500 / <strong>0.500</strong>" in row and "12 pairs" in row  # pairwise P / R / F1 by hand
    assert "0.778 / 0.778 / <strong>0.778</strong>" in row  # B-cubed, 7/9
    assert "n = 4" in row and "builder1" in row and "builder2" in row


def test_a_topic_with_two_pyramids_and_no_figures_yet_says_they_are_being_computed(setup):
    dataset, users = setup
    topic = Topic.objects.get(dataset=dataset)
    PyramidAgreement.objects.filter(topic=topic).delete()
    c = client(users["coord"])
    html = c.get(reverse("dashboards:agreement", args=[dataset.pk])).content.decode()
    assert "T: two or more pyramids, their comparison is being computed" in html
    html = c.get(reverse("dashboards:construction_topic", args=[dataset.pk, "T"])).content.decode()
    assert "being computed" in html
    single = Topic.objects.create(dataset=dataset, external_id="S")
    Pyramid.objects.create(topic=single)
    assert c.get(reverse("dashboards:construction_topic", args=[dataset.pk, "S"])).status_code == 404


def test_the_drill_down_lists_the_scus_that_differ_escaped(setup):
    dataset, users = setup
    p1, p2 = Topic.objects.get(dataset=dataset).pyramids.order_by("pk")
    c = client(users["coord"])
    response = c.get(reverse("dashboards:construction_topic", args=[dataset.pk, "T"]), {"pair": f"{p1.pk}-{p2.pk}"})
    html = response.content.decode()
    kinds = sorted((row["kind"], row["uid_a"], row["uid_b"]) for row in response.context["scus"])
    assert kinds == [
        ("matched", 1, 1),
        ("matched", 2, 3),
        ("only_a", 3, None),
        ("only_a", 4, None),
        ("only_b", None, 2),
        ("only_b", None, 5),
    ]
    assert html.count('data-scu-kind="only_a"') == 2 and html.count('data-scu-kind="only_b"') == 2
    assert "weight 3 vs 2" in html and "weight 2 vs 3" in html
    assert HOSTILE not in html and "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in html
    assert "SCU 4 of builder1" in html and "SCU 5 of builder2" in html
    assert (
        c.get(
            reverse("dashboards:construction_topic", args=[dataset.pk, "T"]), {"pair": f"{p2.pk}-{p1.pk}"}
        ).status_code
        == 404
    )
    assert c.get(reverse("dashboards:construction_topic", args=[dataset.pk, "T"]), {"pair": "x"}).status_code == 404


def _csv(response):
    return list(csv.DictReader(io.StringIO(response.content.decode())))


def test_downloads_are_named_and_stamped_like_every_download(setup):
    dataset, users = setup
    c = client(users["coord"])
    url = reverse("dashboards:construction_export", args=[dataset.pk, "csv"])
    today = timezone.localdate().isoformat()
    response = c.get(url, {"convention": "sacrerouge"})
    assert (
        response["Content-Disposition"]
        == f'attachment; filename="Construction-pyramid-agreement-pairs-sacrerouge-{today}.csv"'
    )
    [row] = _csv(response)
    assert float(row["pairwise_f1"]) == 0.5 and float(row["bcubed_f1"]) == pytest.approx(7 / 9)
    assert row["app_version"] == app_version() and json.loads(row["settings"]) == {
        "convention": "sacrerouge",
        "threshold": 0.5,
    }
    assert float(row["score_mad"]) == pytest.approx((2 / 6 + 2 / 6) / 4)  # SacreROUGE: max weight 6 (test_construction)
    response = c.get(url, {"table": "scus", "topic": "T"})
    assert (
        response["Content-Disposition"]
        == f'attachment; filename="Construction-pyramid-agreement-scus-nist-T-{today}.csv"'
    )
    rows = _csv(response)
    assert len(rows) == 6 and {r["kind"] for r in rows} == {"matched", "only_a", "only_b"}
    assert json.loads(rows[0]["settings"])["topic"] == "T"
    assert HOSTILE in {r["label_a"] for r in rows}  # a CSV cell is data, not markup
    assert c.get(url, {"table": "nope"}).status_code == 400  # an unknown table names the choices (test_choices)


def test_the_api_endpoint_is_read_only_and_for_coordinators(setup):
    dataset, users = setup
    url = reverse("api:dataset-pyramid-agreement", args=[dataset.pk])
    api = client(users["coord"], api=True)
    [row] = api.get(url).json()
    assert (row["topic"], row["pairs"], row["together_both"], row["current"]) == ("T", 12, 2, True)
    response = api.get(url, {"format": "csv", "table": "scus"})
    assert response["Content-Disposition"].endswith(
        f'-pyramid-agreement-scus-nist-{timezone.localdate().isoformat()}.csv"'
    )
    assert len(_csv(response)) == 6
    assert api.get(url, {"topic": "nothing"}).json() == []
    assert api.get(url, {"table": "nope"}).status_code == 400
    assert api.get(url, {"convention": "nope"}).status_code == 400
    assert api.post(url, {}).status_code == 405
    assert client(users["builder1"], api=True).get(url).status_code == 403  # sees the dataset, coordinates nothing
    assert client(users["other"], api=True).get(url).status_code == 404
    assert client(None, api=True).get(url).status_code in (401, 403)


def test_builders_never_see_each_others_pyramid(setup):
    dataset, users = setup
    mine = Pyramid.objects.get(creator=users["builder1"])
    theirs = Pyramid.objects.get(creator=users["builder2"])
    api = client(users["builder1"], api=True)
    listed = api.get(reverse("api:pyramid-list")).json()
    listed = listed["results"] if isinstance(listed, dict) else listed
    assert [p["id"] for p in listed] == [mine.pk]
    assert api.get(reverse("api:pyramid-detail", args=[theirs.pk])).status_code == 404
    assert api.get(reverse("api:pyramid-full", args=[theirs.pk])).status_code == 404
    pages = client(users["builder1"])
    assert pages.get(reverse("frontend:builder", args=[theirs.pk])).status_code == 404
    assert pages.get(reverse("frontend:pyramid-scus", args=[theirs.pk])).status_code == 404
    assert pages.get(reverse("frontend:builder", args=[mine.pk])).status_code == 200


def test_the_drill_down_shows_the_weights_per_aligned_contributor(setup):
    # aligned A0 B0 C0 A6 B6 C6 sit in SCUs weighing (3, 2) (3, 2) (3, 1) (2, 3) (2, 3) (1, 3) in the
    # two pyramids (construction_world): none equal, mean absolute difference 8 / 6
    dataset, users = setup
    p1, p2 = Topic.objects.get(dataset=dataset).pyramids.order_by("pk")
    html = (
        client(users["coord"])
        .get(reverse("dashboards:construction_topic", args=[dataset.pk, "T"]), {"pair": f"{p1.pk}-{p2.pk}"})
        .content.decode()
    )
    shown = html.split("data-contributor-weights>")[1].split("</dd>")[0]
    assert "0.00 of 6 aligned contributors" in shown and "mean absolute difference 1.33" in shown
    assert "A is the first of each pair, by its builder's name" in html
