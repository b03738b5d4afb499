"""Each pytest-xdist worker its own Redis database (``tests/workers.py``): the ones after the
configured database, never the configured one itself nor another worker's; every other part of the
URL kept."""

from tests.workers import worker_redis_url


def test_each_worker_its_own_database_after_the_configured_one():
    urls = [worker_redis_url("redis://127.0.0.1:6379/6", f"gw{n}") for n in range(3)]
    assert urls == ["redis://127.0.0.1:6379/7", "redis://127.0.0.1:6379/8", "redis://127.0.0.1:6379/9"]


def test_the_rest_of_the_url_is_kept_and_the_numbers_wrap_at_sixteen():
    assert worker_redis_url("redis://:secret@cache.example:6380/15", "gw0") == "redis://:secret@cache.example:6380/0"
    assert worker_redis_url("redis://127.0.0.1:6379", "gw1") == "redis://127.0.0.1:6379/2"
