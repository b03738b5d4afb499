"""The shared cache's connections to Redis, failing at once while Redis is unreachable.

Requests read and write the cache (throttle counters, the scoring service's health); the
recomputations' marks live there too. With Redis unreachable each of those calls used to wait for
its timeouts and redis-py's retries (a token request took 1.9-2.5 s, a save 4.7 s). Here:

- no retry on the request path (the callers fall back: throttles count in memory, marks are
  skipped, the sweep catches up later);
- short timeouts (``CONNECT_SECONDS``, ``READ_SECONDS``): a refused connection fails at once, a
  Redis that accepts connections but never answers (stopped with SIGSTOP, a full network buffer)
  holds a call no longer than the read timeout;
- a circuit breaker per process: after a failure, every connection attempt for the next
  ``OPEN_SECONDS`` fails at once without touching the network; then one attempt tries again. So a
  request waits for Redis at most once, and the requests after it not at all.

``waits`` counts the times the breaker opened, i.e. the calls that waited for Redis and failed
(the tests assert on it rather than on wall-clock time alone).
"""

import threading
import time

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

CONNECT_SECONDS = 0.25
READ_SECONDS = 0.5
OPEN_SECONDS = 5.0


class Breaker:
    """When Redis last failed in this process, and how many calls waited for it and failed."""

    def __init__(self):
        self._lock = threading.Lock()
        self.open_until = 0.0
        self.waits = 0

    def is_open(self) -> bool:
        return time.monotonic() < self.open_until

    def trip(self) -> None:
        """Redis failed: open (a failure seen while already open, e.g. the handshake's read inside a
        connect, is the same wait and is not counted again)."""
        with self._lock:
            if not self.is_open():
                self.waits += 1
            self.open_until = time.monotonic() + OPEN_SECONDS

    def reset(self) -> None:
        with self._lock:
            self.open_until, self.waits = 0.0, 0


breaker = Breaker()
FAILURES = (redis.ConnectionError, redis.TimeoutError, OSError)


class GuardedConnection(redis.Connection):
    """A redis-py connection that refuses at once while the breaker is open (connecting, or sending
    on a connection pooled before the failure) and trips it when connecting, sending or reading fails."""

    def connect(self, *args, **kwargs):
        if self._sock is None and breaker.is_open():
            raise redis.ConnectionError("Redis failed moments ago in this process: not trying again yet")
        try:
            return super().connect(*args, **kwargs)
        except FAILURES:
            breaker.trip()
            raise

    def send_packed_command(self, *args, **kwargs):
        if breaker.is_open():  # a pooled connection made before the failure would wait again
            self.disconnect()
            raise redis.ConnectionError("Redis failed moments ago in this process: not trying again yet")
        try:
            return super().send_packed_command(*args, **kwargs)
        except FAILURES:
            breaker.trip()
            raise

    def read_response(self, *args, **kwargs):
        try:
            return super().read_response(*args, **kwargs)
        except FAILURES:
            breaker.trip()
            raise


def connection_options() -> dict:
    """Options of a redis-py pool (or client) whose calls fail fast (the module docstring)."""
    return {
        "connection_class": GuardedConnection,
        "socket_connect_timeout": CONNECT_SECONDS,
        "socket_timeout": READ_SECONDS,
        "retry": Retry(NoBackoff(), 0),
    }


def cache_settings(url: str) -> dict:
    """Django's ``CACHES["default"]`` on Redis at ``url``, through guarded connections."""
    return {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": url, "OPTIONS": connection_options()}


def reachable(url: str) -> bool:
    """Does Redis answer a PING now? False at once while the breaker is open."""
    if breaker.is_open():
        return False
    try:
        return bool(redis.Redis.from_url(url, **connection_options()).ping())
    except FAILURES:
        return False
