"""The client's address, as throttles, crowd limits and login lockouts count it.

``X-Forwarded-For`` is believed only from a reverse proxy the deployment names
(``TRUSTED_PROXIES``: addresses or networks) and only as deep as ``TRUSTED_PROXY_COUNT`` says
proxies append to it: any client can write the header, so a request reaching a node directly
(from an address not named) is counted by its connection's address (``REMOTE_ADDR``), whatever
it claims. Behind N trusted proxies the address is the N-th entry from the right of the header
(the one the outermost proxy saw). With a count but no proxy named the header is ignored, and the
log says so once.
"""

import functools
import ipaddress
import logging

from django.conf import settings

log = logging.getLogger(__name__)


@functools.lru_cache(maxsize=8)
def _trusted_networks(proxies: tuple[str, ...], count: int) -> tuple:
    """The networks of ``TRUSTED_PROXIES`` (a bare address: its own /32 or /128)."""
    if count and not proxies:
        log.warning(
            "TRUSTED_PROXY_COUNT=%d but TRUSTED_PROXIES names no proxy: X-Forwarded-For is ignored "
            "and every client is counted by its connection's address",
            count,
        )
    return tuple(ipaddress.ip_network(proxy, strict=False) for proxy in proxies)


def _from_trusted_proxy(remote: str) -> bool:
    networks = _trusted_networks(tuple(settings.TRUSTED_PROXIES), settings.TRUSTED_PROXY_COUNT)
    try:
        address = ipaddress.ip_address(remote)
    except ValueError:
        return False
    if address.version == 6 and address.ipv4_mapped:
        address = address.ipv4_mapped
    return any(address in network for network in networks)


def client_address(request) -> str:
    remote = request.META.get("REMOTE_ADDR", "")
    count = settings.TRUSTED_PROXY_COUNT
    forwarded = request.META.get("HTTP_X_FORWARDED_FOR")
    if not count or not forwarded or not _from_trusted_proxy(remote):
        return remote
    entries = [entry.strip() for entry in forwarded.split(",")]
    return entries[-min(count, len(entries))] or remote


def forwarded_headers_from_named_proxies(get_response):
    """Middleware, first of all: the headers a proxy sets (``X-Forwarded-For``, ``X-Forwarded-Proto``)
    are dropped from a request that does not come from a proxy ``TRUSTED_PROXIES`` names. Django's
    ``SECURE_PROXY_SSL_HEADER`` believes ``X-Forwarded-Proto`` from anyone, so a client reaching a
    node directly could pass a plain-HTTP request off as HTTPS (no redirect to HTTPS, secure-only
    checks passed) as it could pass off any address as its own."""

    def middleware(request):
        if settings.TRUSTED_PROXY_COUNT and not _from_trusted_proxy(request.META.get("REMOTE_ADDR", "")):
            request.META.pop("HTTP_X_FORWARDED_PROTO", None)
            request.META.pop("HTTP_X_FORWARDED_FOR", None)
        return get_response(request)

    return middleware


def client_network(request) -> str:
    """The client as per-client limits count it: its IPv4 address, or the /64 network of an IPv6
    address (one subscriber's usual allocation: counting single IPv6 addresses would give one
    client 2**64 of them)."""
    address = client_address(request)
    try:
        parsed = ipaddress.ip_address(address)
    except ValueError:
        return address
    if parsed.version == 6:
        if parsed.ipv4_mapped:
            return str(parsed.ipv4_mapped)
        return str(ipaddress.ip_network(f"{parsed}/64", strict=False))
    return address
