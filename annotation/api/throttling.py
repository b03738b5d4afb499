"""Throttles that count atomically and keep working when the shared cache (Redis) is unreachable.

DRF's own throttles read the request history from the cache, append and write it back: requests
arriving together all read the same history, and one address got 831 crowd submissions accepted
in a minute under a limit of 600. ``CountingThrottle`` counts with one atomic increment per
request instead (Redis ``INCR``; the local cache's ``incr`` holds its lock), over fixed windows of
the rate's duration, the previous window weighted by how much of it a sliding window still covers
(so a burst across a window boundary is not allowed twice the rate). Refused requests count too:
a client that keeps flooding stays refused until it slows down.

With Redis down every throttled request (the token endpoint, the crowd pages) would answer 500:
the counters then live in this process's own memory while the shared cache fails (limits hold per
process instead of across processes, and nothing fails).
"""

import logging
import time

from django.core.cache import cache
from django.core.cache.backends.locmem import LocMemCache
from rest_framework.throttling import SimpleRateThrottle

from annotation.api.client_address import client_address
from annotation.jobs import framework_internals, queue

log = logging.getLogger(__name__)
_local = LocMemCache("pyramid-throttle-fallback", {})


def _count_in(store, key: str, seconds: int) -> tuple[int, int]:
    """Increment this window's counter of ``key`` (created with an expiry of two windows, since the
    next window reads it) and read the previous window's: (this window's count, the previous one's)."""
    window = int(time.time() // seconds)
    current, previous = f"{key}:{window}", f"{key}:{window - 1}"
    redis = queue.redis_cache(store)
    if redis is not None:
        # One transaction: create with its expiry if absent, then increment (never a counter
        # without expiry, which Django's exists-then-INCR could leave when the key expires between).
        redis_key, redis_previous = redis.make_and_validate_key(current), redis.make_and_validate_key(previous)
        pipe = framework_internals.redis_client(redis, redis_key).pipeline(transaction=True)
        pipe.set(redis_key, 0, ex=2 * seconds, nx=True).incr(redis_key).get(redis_previous)
        _, count, before = pipe.execute()
        return count, int(before or 0)
    store.add(current, 0, 2 * seconds)
    try:
        count = store.incr(current)
    except ValueError:  # expired between the two calls: a new window's first request
        store.add(current, 1, 2 * seconds)
        count = 1
    return count, int(store.get(previous) or 0)


def count_request(key: str, seconds: int) -> float:
    """Count one request of ``key`` and return the requests counted over the last ``seconds``
    (this window's, plus the previous window's weighted by the part a sliding window still covers)."""
    try:
        count, before = _count_in(cache, key, seconds)
    except Exception:
        log.warning("cache unreachable: throttling from this process's memory")
        count, before = _count_in(_local, key, seconds)
    covered = 1 - (time.time() % seconds) / seconds
    return count + before * covered


class CountingThrottle(SimpleRateThrottle):
    """A DRF rate throttle (``get_cache_key`` and the rate as DRF's) counted by ``count_request``,
    per client as ``client_address`` tells it (DRF's own would believe any X-Forwarded-For)."""

    def get_ident(self, request):
        return client_address(request)

    def allow_request(self, request, view):
        if self.rate is None:
            return True
        self.key = self.get_cache_key(request, view)
        if self.key is None:
            return True
        self.retry_after = self.duration - time.time() % self.duration
        return count_request(self.key, self.duration) <= self.num_requests

    def wait(self):
        return self.retry_after
