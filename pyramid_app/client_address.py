"""The client's address, as throttles and login lockouts count it.

One rule, DRF's (``BaseThrottle.get_ident``) configured by ``TRUSTED_PROXY_COUNT`` (DRF's
``NUM_PROXIES``): with no trusted proxy the address is the connection's (``REMOTE_ADDR``) and an
``X-Forwarded-For`` header is ignored, since any client can write one; behind N proxies it is the
address the outermost trusted proxy saw (the N-th entry from the right of ``X-Forwarded-For``).
"""
from rest_framework.throttling import BaseThrottle


def client_address(request) -> str:
    return BaseThrottle().get_ident(request)
