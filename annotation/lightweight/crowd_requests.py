"""What a crowd request is, to the crowd pages and the crowd API alike: where it comes from
(``crowd_client``) and how often it may come (``CrowdThrottle``, one budget per client network for
both)."""

import hashlib

from django.conf import settings as django_settings

from annotation.api.client_address import client_network
from annotation.api.throttling import CountingThrottle
from annotation.lightweight import work


class CrowdThrottle(CountingThrottle):
    """Crowd pages and endpoints: per client (``client_network``), logged in or not (``CROWD_RATE``)."""

    scope = "crowd"

    def get_rate(self):
        return django_settings.CROWD_RATE

    def get_cache_key(self, request, view):
        return f"throttle_crowd_{client_network(request)}"


def crowd_client(request, worker_key: str = "", decoy: bool = False) -> work.CrowdClient:
    """Where a crowd request comes from (pages and API alike): its ``client_network`` and a hash of
    its session cookie's key, if it sent one (the key itself is a credential: never stored), with
    the worker's key it presented (``decoy``: as ``lightweight_work.worker_key`` found it)."""
    key = request.session.session_key
    session = hashlib.sha256(key.encode()).hexdigest()[:32] if key else ""
    worker_key = worker_key if isinstance(worker_key, str) else ""
    return work.CrowdClient(client_network(request), session, worker_key, decoy)
