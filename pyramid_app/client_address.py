"""The client's address, as throttles and login lockouts count it.

One rule, DRF's (``BaseThrottle.get_ident``) configured by ``TRUSTED_PROXY_COUNT`` (DRF's
``NUM_PROXIES``): with no trusted proxy the address is the connection's (``REMOTE_ADDR``) and an
``X-Forwarded-For`` header is ignored, since any client can write one; behind N proxies it is the
address the outermost trusted proxy saw (the N-th entry from the right of ``X-Forwarded-For``).
"""
import ipaddress

from rest_framework.throttling import BaseThrottle


def client_address(request) -> str:
    return BaseThrottle().get_ident(request)


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
