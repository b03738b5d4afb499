"""An unknown ``convention=`` or ``table=`` is answered the same way by every page, download and API
endpoint that takes one: 400 naming the choices (pages in the app's layout). A silent default gave
another table's CSV with 200 (``scores.csv?table=sistems``) and the NIST figures for a misspelt
convention; some downloads said 404, the API said 400."""

import re

import pytest
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from annotation.dashboards import snapshots
from annotation.dashboards.statistics import TABLES as STATISTICS_TABLES
from annotation.pyramids import construction

from tests.dashboards.helpers import build_toy, make_users, second_pyramid

pytestmark = pytest.mark.django_db

CONVENTIONS = "nist, sacrerouge"


@pytest.fixture
def toy():
    dataset = build_toy()
    topic = dataset.topics.order_by("external_id").first()
    second_pyramid(topic, "ann2")  # two pyramids: the construction agreement pages have a pair
    construction.recompute_topics([topic.pk])
    snapshots.recompute_dataset(dataset.pk)
    users = make_users(dataset)
    client = Client()
    client.force_login(users["coord"])
    api = APIClient()
    api.force_authenticate(users["coord"])
    return dataset, client, api


def page_urls(dataset):
    """Every dashboard page and download that reads ``convention=`` (their own query, so another
    parameter's default cannot hide the check)."""
    topic = dataset.topics.order_by("external_id").first()
    peer = topic.peersummarys.order_by("external_id").first()
    d = dataset.pk
    return [
        reverse("dashboards:agreement", args=[d]),
        reverse("dashboards:agreement_export", args=[d, "csv"]),
        reverse("dashboards:agreement_topic", args=[d, topic.external_id]),
        reverse("dashboards:agreement_peer", args=[d, topic.external_id, peer.external_id]),
        reverse("dashboards:scores", args=[d]),
        reverse("dashboards:scores_export", args=[d, "csv"]),
        reverse("dashboards:significance", args=[d]),
        reverse("dashboards:chart_export", args=[d, "tiers"]),
        reverse("dashboards:statistics_export", args=[d, "json"]),
        reverse("dashboards:metaeval", args=[d]),
        reverse("dashboards:metaeval_export", args=[d, "csv"]),
        reverse("dashboards:construction_topic", args=[d, topic.external_id]),
        reverse("dashboards:construction_export", args=[d, "csv"]),
    ]


def assert_bad_choice_page(response, name, choices):
    body = response.content.decode()
    assert response.status_code == 400, (response.status_code, body[:300])
    assert f"Unknown {name} &#x27;bogus&#x27;: choose one of {choices}." in body
    assert 'class="topbar"' in body  # the app's layout, not Django's bare page


def test_every_page_and_download_answers_an_unknown_convention_with_the_choices(toy):
    dataset, client, _ = toy
    for url in page_urls(dataset):
        assert client.get(url).status_code == 200, url  # the page itself works
        assert_bad_choice_page(client.get(url + "?convention=bogus"), "convention", CONVENTIONS)


@pytest.mark.parametrize(
    "name, tables",
    [
        ("scores_export", "topics, systems"),
        ("statistics_export", ", ".join(STATISTICS_TABLES)),
        ("construction_export", ", ".join(construction.TABLES)),
    ],
)
def test_every_download_answers_an_unknown_table_with_the_choices(toy, name, tables):
    dataset, client, _ = toy
    url = reverse(f"dashboards:{name}", args=[dataset.pk, "csv"])
    assert client.get(url).status_code == 200
    assert_bad_choice_page(client.get(url + "?table=bogus"), "table", tables)


def api_operations():
    """Every API operation the OpenAPI schema says takes ``convention`` or ``table``, found in the
    schema so a new endpoint is covered without being listed here."""
    from drf_spectacular.generators import SchemaGenerator

    schema = SchemaGenerator().get_schema(request=None, public=True)
    for path, methods in schema["paths"].items():
        for method, operation in methods.items():
            names = {p["name"] for p in operation.get("parameters", []) if p["in"] == "query"}
            for name in names & {"convention", "table"}:
                yield path, method, name


def test_every_api_endpoint_answers_an_unknown_choice_as_the_pages_do(toy):
    dataset, _, api = toy
    operations = list(api_operations())
    assert {(p, n) for p, _, n in operations} >= {
        ("/api/datasets/{id}/scores/", "convention"),
        ("/api/datasets/{id}/statistics/", "table"),
        ("/api/datasets/{id}/pyramid-agreement/", "table"),
        ("/api/datasets/{id}/pyramid-agreement/", "convention"),
    }, operations
    for path, method, name in operations:
        assert method == "get" and re.findall(r"\{(\w+)\}", path) == ["id"], path  # the dataset is the one object named
        url = path.replace("{id}", str(dataset.pk))
        assert api.get(url).status_code == 200, url
        answer = api.get(url, {name: "bogus"})
        assert answer.status_code == 400, (url, name, answer.content[:300])
        choices = CONVENTIONS if name == "convention" else None
        message = answer.json()[name][0]
        assert message.startswith(f"Unknown {name} 'bogus': choose one of "), message
        if choices:
            assert message.endswith(f"{choices}."), message


def test_forbidden_and_missing_pages_say_why_in_the_layout(toy):
    dataset, _, _ = toy
    from django.contrib.auth import get_user_model

    annotator = Client()
    annotator.force_login(get_user_model().objects.get(username="ann1"))
    denied = annotator.get(reverse("dashboards:scores", args=[dataset.pk]))
    body = denied.content.decode()
    assert denied.status_code == 403 and "The dashboards are for coordinators." in body and 'class="topbar"' in body
    other = Client()
    other.force_login(get_user_model().objects.get(username="other"))  # a coordinator of another dataset
    missing = other.get(reverse("dashboards:scores", args=[dataset.pk]))
    assert missing.status_code == 404 and "No such dataset among those you coordinate." in missing.content.decode()
    assert 'class="topbar"' in missing.content.decode()
    nowhere = annotator.get("/no/such/page/")
    assert nowhere.status_code == 404 and "There is nothing at /no/such/page/." in nowhere.content.decode()
