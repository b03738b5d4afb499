"""``Idempotency-Key`` on the API's POSTs: a client that sends a create again (its first attempt
answered 500 or never answered, though it may have committed: issue 24 saw 2 of 58 such requests
under ``pg_terminate_backend``) gets the first answer instead of a duplicate.

The key is the client's, one per logical action and reused on every retry of it; it is scoped by
user and endpoint (method and path), and the hash of the request body is kept with it. One
transaction runs around the whole request:

1. the key is taken by inserting its row (unique per user, endpoint and key: one statement,
   ``queries.take_key``). On PostgreSQL a second request with the same key waits on that insert
   until the first one ends (at most :data:`WAIT_SECONDS`, then 409: retry later);
2. a key already taken answers from its row: the stored answer (``Idempotent-Replayed: true``)
   for the same body, 422 for another body; an expired row is replaced (the key is taken afresh);
3. the request runs; a 2xx answer is stored in the row and commits with what the request wrote,
   so one is never without the other. Any other answer rolls the row back (with whatever the
   request wrote: an API request that is refused writes nothing), so a retry runs again.

Rows older than ``IDEMPOTENCY_KEY_SECONDS`` are forgotten: an expired row is replaced when its key
comes again, and the periodic sweep deletes everyone's (not each POST: a DELETE in a transaction of
its own was three statements on every save of an editor).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from datetime import timedelta

from django.conf import settings
from django.db import OperationalError, transaction
from django.http import HttpResponse, JsonResponse
from django.utils import timezone

from annotation.api import queries
from annotation.api.models import IdempotentRequest

HEADER = "Idempotency-Key"
WAIT_SECONDS = 10
KEPT_HEADERS = ("Content-Type", "ETag", "Location")
_LOCK_NOT_AVAILABLE = "55P03"


def key_problem(key: str) -> str | None:
    if not 1 <= len(key) <= 255 or not all("!" <= c <= "~" for c in key):
        return f"The {HEADER} header must be 1 to 255 visible ASCII characters (a UUID, for example)."
    return None


def respond(request, user, run: Callable[[], HttpResponse]) -> HttpResponse:
    """The answer to ``request`` (a POST with the header, by ``user``): ``run()``'s, or the stored one."""
    key = request.headers[HEADER]
    problem = key_problem(key)
    if problem is not None:
        return JsonResponse({HEADER: [problem]}, status=400)
    endpoint = f"{request.method} {request.path}"[:500]
    body_hash = hashlib.sha256(request.body).hexdigest()
    with transaction.atomic():
        earlier = _take(user, endpoint, key, body_hash)
        if earlier is not None:
            transaction.set_rollback(True)  # nothing was written (and a lock wait that timed out ended the transaction)
            return earlier
        response = run()
        if not 200 <= response.status_code < 300:
            transaction.set_rollback(True)
            return response
        if hasattr(response, "render"):
            response.render()
        IdempotentRequest.objects.filter(user=user, endpoint=endpoint, key=key).update(
            status=response.status_code,
            content=response.content,
            headers={name: response[name] for name in KEPT_HEADERS if response.has_header(name)},
        )
        return response


def forget_expired() -> int:
    """Delete the expired rows (everyone's: beat's periodic sweep); how many."""
    return IdempotentRequest.objects.filter(created_at__lt=_expired_before()).delete()[0]


def _expired_before():
    return timezone.now() - timedelta(seconds=settings.IDEMPOTENCY_KEY_SECONDS)


def _take(user, endpoint: str, key: str, body_hash: str) -> HttpResponse | None:
    """None when this request took the key, else the answer for a key already taken."""
    try:
        if queries.take_key(user.pk, endpoint, key, body_hash, wait_seconds=WAIT_SECONDS):
            return None
    except OperationalError as error:
        if getattr(error.__cause__, "sqlstate", None) != _LOCK_NOT_AVAILABLE:
            raise
        return _in_progress()
    first = IdempotentRequest.objects.filter(user=user, endpoint=endpoint, key=key).first()
    if first is None:  # forgotten by the sweep meanwhile: the client may send it again
        return _in_progress()
    if first.created_at < _expired_before():  # forgotten: a new request, which takes the key afresh
        IdempotentRequest.objects.filter(pk=first.pk).delete()
        return (
            None if queries.take_key(user.pk, endpoint, key, body_hash, wait_seconds=WAIT_SECONDS) else _in_progress()
        )
    if first.body_hash != body_hash:
        return JsonResponse(
            {
                "detail": f"This {HEADER} was used for another request body to this endpoint: "
                "use a new key for a new request."
            },
            status=422,
        )
    replay = HttpResponse(bytes(first.content), status=first.status)
    for name, value in first.headers.items():
        replay[name] = value
    replay["Idempotent-Replayed"] = "true"
    return replay


def _in_progress() -> JsonResponse:
    response = JsonResponse(
        {
            "detail": f"A request with this {HEADER} is still being processed: retry in a moment.",
            "code": "idempotency_in_progress",
        },
        status=409,
    )
    response["Retry-After"] = "1"
    return response
