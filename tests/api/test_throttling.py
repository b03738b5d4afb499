"""With the shared cache (Redis) unreachable, throttled endpoints neither fail nor stop limiting:
the history is kept in the process's memory until the cache answers again."""
from django.contrib.auth.models import User
from rest_framework.test import APIClient

from annotation.api import throttling


class Unreachable:
    def get(self, *args, **kwargs):
        raise ConnectionError("Redis is down")

    set = add = incr = get_client = get


def test_the_token_endpoint_keeps_answering_and_limiting_without_the_cache(db, monkeypatch, settings):
    monkeypatch.setattr(throttling, "cache", Unreachable())
    throttling._local.clear()
    User.objects.create_user("dora", password="a-long-password-1")
    client = APIClient(REMOTE_ADDR="10.1.2.3")
    statuses = [client.post("/api/auth/token/", {"username": "dora", "password": "a-long-password-1"}, format="json").status_code
                for _ in range(11)]
    assert statuses[:10] == [201] + [200] * 9 and statuses[10] == 429  # TOKEN_RATE 10/min, counted in memory
