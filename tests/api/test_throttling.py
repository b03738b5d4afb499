"""With the shared cache (Redis) unreachable, throttled endpoints neither fail nor stop limiting:
the history is kept in the process's memory until the cache answers again."""

import time

import pytest
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
    statuses = [
        client.post(
            "/api/auth/token/", {"username": "dora", "password": "a-long-password-1"}, format="json"
        ).status_code
        for _ in range(11)
    ]
    assert statuses[:10] == [201] + [200] * 9 and statuses[10] == 429  # TOKEN_RATE 10/min, counted in memory


@pytest.mark.redis
def test_on_redis_a_request_is_counted_in_one_transaction_with_its_expiry(monkeypatch):
    """One pipelined transaction per counted request (SET NX EX, INCR, GET): Django's ``cache``
    is a proxy, which ``isinstance(cache, RedisCache)`` never matched, so every crowd request went
    through ``add``, ``incr`` (EXISTS, INCRBY) and ``get``: four round trips of the app's CPU."""
    from django.core.cache import cache
    from django.core.cache.backends.redis import RedisCache

    def round_trip(*args, **kwargs):
        raise AssertionError("counted through the cache's own add/incr/get")

    for method in ("add", "incr", "get"):
        monkeypatch.setattr(RedisCache, method, round_trip)
    key = f"throttle_test_{time.time_ns()}"
    assert [throttling.count_request(key, 60) for _ in range(3)][-1] >= 3
    client = cache._cache.get_client(write=True)
    assert 0 < client.ttl(cache.make_and_validate_key(f"{key}:{int(time.time() // 60)}")) <= 120
