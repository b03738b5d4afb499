"""The API's base viewset and what every view of a concept shares: objects scoped by the access
rule, ``?format=`` answered as bad input when unknown, files named by ``downloads``.

Every viewset filters its queryset with ``access.visible`` (what you may not see is a 404)
and checks ``access.can_change`` / ``check_create`` before a write (what you may not do is a
403). List querysets prefetch what their serializers read, so a page costs a fixed number of
queries.
"""

from django.db import transaction
from django.http import Http404
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse
from rest_framework import viewsets
from rest_framework.exceptions import ValidationError
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response

from annotation.api import access, downloads
from annotation.api.idempotency import IdempotentPostMixin
from annotation.api.renderers import FileRenderer


class FormatNegotiationMixin:
    """An unknown ``?format=`` is bad input (400), not DRF's default 404; errors are JSON whatever
    file format was asked for."""

    def perform_content_negotiation(self, request, force=False):
        try:
            return super().perform_content_negotiation(request, force)
        except Http404:
            formats = ", ".join(r.format for r in self.get_renderers())
            raise ValidationError({"format": [f"Unknown format; choose one of: {formats}."]}) from None

    def handle_exception(self, exc):
        response = super().handle_exception(exc)
        if isinstance(getattr(self.request, "accepted_renderer", None), FileRenderer):
            self.request.accepted_renderer, self.request.accepted_media_type = JSONRenderer(), JSONRenderer.media_type
        return response


class ScopedViewSet(IdempotentPostMixin, FormatNegotiationMixin, viewsets.ModelViewSet):
    """CRUD over the objects the user may see; writes checked per object (and per parent on create)."""

    permission_classes = [access.CanChange]
    # No PUT: where an object lives (its topic, pyramid, ...) is fixed at creation, so a full
    # replacement cannot be expressed; PATCH changes what may change.
    http_method_names = ["get", "post", "patch", "delete", "head", "options"]
    base_queryset = None

    def get_queryset(self):
        return access.visible(self.request.user, self.base_queryset.all())

    def perform_create(self, serializer):
        access.check_create(self.request.user, serializer.Meta.model, serializer.validated_data)
        with self._create_transaction():
            serializer.save()
            self._reload(serializer)

    def _create_transaction(self):
        """Around a create's save and the read answering it: the answer is read in the write's
        transaction, so a concurrent delete waits."""
        return transaction.atomic()

    def perform_update(self, serializer):
        with transaction.atomic():
            serializer.save()
            self._reload(serializer)

    def _reload(self, serializer):
        """Answer a write with the object as a read shows it (derived fields such as weight included)."""
        serializer.instance = self.base_queryset.get(pk=serializer.instance.pk)


def attachment(response: Response, filename: str) -> Response:
    response["Content-Disposition"] = downloads.content_disposition(filename)
    return response


FORMAT_PARAM = OpenApiParameter("format", str, description="file format")
ROWS_RESPONSE = OpenApiResponse(
    {"type": "array", "items": {"type": "object", "additionalProperties": True}},
    description="one object per row (JSON), or the same rows as CSV",
)
