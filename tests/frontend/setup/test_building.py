"""The dataset's setting that turns the pyramid builder's proposals off (issue 30 §2: unassisted
building for agreement studies), edited on the dataset's set-up page and through the API."""

import re

from django.test import Client
from rest_framework.test import APIClient

from annotation.corpus.models import Dataset


def _client(user=None, csrf=False) -> Client:
    client = Client(enforce_csrf_checks=csrf)
    if user is not None:
        client.force_login(user)
    return client


def checkbox(page: str) -> str:
    return re.search(r'<input[^>]*name="assisted_building"[^>]*>', page).group()


def test_the_coordinator_turns_assistance_off_and_on_again(people):
    coord, page = _client(people.coord), f"/setup/{people.dataset.pk}/"
    assert " checked" in checkbox(coord.get(page).content.decode())  # on by default
    answer = coord.post(f"{page}building/", {})  # the box unticked
    assert answer.status_code == 302 and answer["Location"] == page
    assert Dataset.objects.get(pk=people.dataset.pk).assisted_building is False
    shown = coord.get(page).content.decode()
    assert "built unassisted" in shown and " checked" not in checkbox(shown)
    coord.post(f"{page}building/", {"assisted_building": "on"})
    assert Dataset.objects.get(pk=people.dataset.pk).assisted_building is True


def test_only_the_datasets_coordinators_change_it_with_csrf(people):
    url = f"/setup/{people.dataset.pk}/building/"
    assert _client().post(url, {}).status_code == 302  # to the login page
    assert _client(people.ann).post(url, {}).status_code == 403
    assert _client(people.other).post(url, {}).status_code == 404
    assert _client(people.coord, csrf=True).post(url, {}).status_code == 403
    assert _client(people.coord).get(url).status_code == 405
    assert Dataset.objects.get(pk=people.dataset.pk).assisted_building is True


def test_the_api_reads_and_writes_it(people):
    api = APIClient()
    api.force_authenticate(people.coord)
    url = f"/api/datasets/{people.dataset.pk}/"
    assert api.get(url).json()["assisted_building"] is True
    assert api.patch(url, {"assisted_building": False}, format="json").status_code == 200
    assert Dataset.objects.get(pk=people.dataset.pk).assisted_building is False
    api.force_authenticate(people.ann)
    assert api.patch(url, {"assisted_building": True}, format="json").status_code in (403, 404)
    assert Dataset.objects.get(pk=people.dataset.pk).assisted_building is False
