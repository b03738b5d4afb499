"""Crowd links against floods from one client: the rate limit counts every request (logged in or
not, requests arriving together included), and malformed ids are refused, never a server error."""
import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from rest_framework.test import APIClient

from .test_crowd_submissions import at_once
from .test_reservations import judging_link

FLOOD = 40


@pytest.mark.postgres
@pytest.mark.redis
def test_requests_arriving_together_are_counted_one_by_one(transactional_db, settings):
    """The throttle read, appended to and wrote back its history: requests arriving together all
    read the same history and were all let through."""
    settings.CROWD_RATE = "10/min"
    link = judging_link(peers=1, judges=1)
    for round_ in range(3):   # a fresh counter each round (another address); pages and API share it
        address = f"127.0.{round_}.9"
        calls = [lambda i=i: (APIClient(REMOTE_ADDR=address).get(f"/api/crowd/{link.token}/") if i % 2 else   # 400 (no worker id) once let through
                              Client(REMOTE_ADDR=address).get(f"/lightweight/crowd/{link.token}/")).status_code
                 for i in range(FLOOD)]
        statuses = at_once(calls)
        assert statuses.count(429) == FLOOD - 10, (round_, statuses)


@pytest.mark.django_db
def test_a_logged_in_user_is_limited_like_anyone(settings):
    settings.CROWD_RATE = "3/min"
    link = judging_link(peers=1, judges=1)
    user = get_user_model().objects.create_user("someone")
    page, api = Client(), APIClient()
    page.force_login(user)
    api.force_authenticate(user)
    statuses = [page.get(f"/lightweight/crowd/{link.token}/").status_code for _ in range(3)]
    statuses.append(api.get(f"/api/crowd/{link.token}/", {"worker": "w1"}).status_code)
    assert statuses == [200, 200, 200, 429]
    assert Client(REMOTE_ADDR="127.0.0.2").get(f"/lightweight/crowd/{link.token}/").status_code == 200   # another client


@pytest.mark.django_db
def test_a_nul_byte_in_a_worker_id_or_a_link_is_refused_not_a_server_error():
    link = judging_link(peers=1, judges=1)
    assert Client().get("/lightweight/crowd/a%00b/").status_code == 404
    assert APIClient().get("/api/crowd/a%00b/", {"worker": "w1"}).status_code == 404
    assert APIClient().get(f"/api/crowd/{link.token}/", {"worker": "a\x00b"}).status_code == 400
    posted = APIClient().post(f"/api/crowd/{link.token}/", {"worker": "a\x00b", "task": link.pyramid.tasks.first().pk,
                                                            "answers": {}}, format="json")
    assert posted.status_code == 400
    page = Client()
    refused = page.post(f"/lightweight/crowd/{link.token}/", {"worker": "a\x00b"})
    assert refused.status_code == 200 and "Null characters are not allowed" in refused.content.decode()
    assert page.get(f"/lightweight/crowd/{link.token}/", {"worker": "a\x00b", "change": ""}).status_code == 200
