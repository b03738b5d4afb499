"""Throttles that keep working when the shared cache (Redis) is unreachable.

DRF's throttles keep their request history in the default cache; with Redis down every throttled
request (the token endpoint, the crowd pages) would answer 500. ``ResilientCache`` falls back to
this process's own memory while the shared cache fails: limits then hold per process instead of
across processes, and nothing fails.
"""
import logging

from django.core.cache import cache
from django.core.cache.backends.locmem import LocMemCache

log = logging.getLogger(__name__)
_local = LocMemCache("pyramid-throttle-fallback", {})


class ResilientCache:
    def get(self, key, default=None):
        try:
            return cache.get(key, default)
        except Exception:
            log.warning("cache unreachable: throttling from this process's memory")
            return _local.get(key, default)

    def set(self, key, value, timeout=None):
        try:
            cache.set(key, value, timeout)
        except Exception:
            _local.set(key, value, timeout)


class ResilientThrottleMixin:
    """Mix into a DRF throttle class (before it) so it survives an unreachable cache."""

    cache = ResilientCache()
