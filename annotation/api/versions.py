"""Versions of what the API serves: reading the client's If-Match (which revision of the document it
last saw), and the ETag of a metadata object (a hash of how the API shows it)."""

import hashlib
import json

from rest_framework import status
from rest_framework.exceptions import APIException
from rest_framework.response import Response


class PreconditionRequired(APIException):
    status_code = 428
    default_detail = 'Send If-Match: "<revision>" with the revision you last read (the ETag of the document).'
    default_code = "precondition_required"


def expected_revision(request) -> int | None:
    """The revision named by If-Match; 428 when absent or unreadable.

    ``If-Match: *`` (HTTP: "any current version") is an explicit opt-out for scripts that do not
    track versions: the write then applies to whatever the document is now.
    """
    raw = request.headers.get("If-Match", "").strip()
    if raw == "*":
        return None
    if raw.startswith("W/"):
        raw = raw[2:]
    try:
        return int(raw.strip('"'))
    except ValueError:
        raise PreconditionRequired() from None


class RepresentationVersionMixin:
    """A version for metadata objects (datasets, topics, summaries, assignments): the ETag is a hash
    of the object as the API shows it. ``If-Match`` is optional for them; a stale one gets 409 with
    the current state instead of overwriting someone else's change."""

    @staticmethod
    def representation_etag(data) -> str:
        return '"r-' + hashlib.sha256(json.dumps(data, sort_keys=True, default=str).encode()).hexdigest()[:20] + '"'

    def retrieve(self, request, *args, **kwargs):
        response = super().retrieve(request, *args, **kwargs)
        response["ETag"] = self.representation_etag(response.data)
        return response

    def _check_if_match(self, request):
        sent = request.headers.get("If-Match", "").strip()
        if not sent or sent == "*":
            return None
        instance = self.get_object()
        current = self.get_serializer(instance).data
        if sent != self.representation_etag(current):
            return Response(
                {"detail": "Changed since you read it: your change was not applied.", "current": current},
                status=status.HTTP_409_CONFLICT,
                headers={"ETag": self.representation_etag(current)},
            )
        return None

    def partial_update(self, request, *args, **kwargs):
        refused = self._check_if_match(request)
        if refused is not None:
            return refused
        response = super().partial_update(request, *args, **kwargs)
        response["ETag"] = self.representation_etag(response.data)
        return response

    def destroy(self, request, *args, **kwargs):
        return self._check_if_match(request) or super().destroy(request, *args, **kwargs)
