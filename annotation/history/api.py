"""Document versions (ETag / If-Match), undo/redo and the audit history, for the viewsets of the
documents' concepts (``pyramids.api``, ``peers.api``).

A pyramid, and a peer annotation, is edited as one document with a revision (docs/editing-api.md).
Every write to its content (SCUs, contributors, parts, matches, and the actions here) must carry
``If-Match: "<revision>"``: without it the answer is 428, with a stale one 409 listing the changes
made since; nothing is written in either case (``If-Match: *`` knowingly skips the check).
Successful writes answer with the new revision in the ``ETag`` header (and ``revision`` in action
bodies).

Which document versions an object (``document_of``), what an action changed in it (``delta``) and
the topic it belongs to (``topic_of``) are told by the document's concept: the history, below
them, knows neither model.
"""

from django.db.models import Model
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.decorators import action
from rest_framework.exceptions import NotFound
from rest_framework.response import Response

from annotation.access import rules
from annotation.api.serializers import django_errors_as_drf
from annotation.api.versions import expected_revision
from annotation.history import changes
from annotation.history.models import Change
from annotation.history.serializers import ChangeSerializer


def conflict_response(conflict: changes.Conflict) -> Response:
    changed = [
        {"id": c.pk, "summary": c.summary, "user": c.user.username if c.user_id else None, "created_at": c.created_at}
        for c in conflict.changes
    ]
    return Response(
        {"detail": str(conflict), "revision": conflict.current_revision, "changes": changed},
        status=status.HTTP_409_CONFLICT,
        headers={"ETag": f'"{conflict.current_revision}"'},
    )


class VersionedMixin:
    """ETag on reads, If-Match on content writes, 409 on conflicts (for the object viewsets).

    ``versioned_writes``: whether create/update/delete of this viewset's objects needs If-Match
    (content of a document), as opposed to metadata such as a status.
    """

    versioned_writes = True

    def document_of(self, obj: Model) -> tuple[type[Model], int]:
        """The document (its model and id) whose revision versions ``obj``."""
        raise NotImplementedError

    def delta(self, outcome: changes.Outcome) -> dict | None:
        """What the action changed, in the shape of the document's ``full`` read (None: nothing recorded)."""
        raise NotImplementedError

    def get_serializer_context(self):
        # Read lazily by the serializer when it writes (the browsable API builds forms with a faked method).
        return {**super().get_serializer_context(), "versioned": self.versioned_writes}

    def handle_exception(self, exc):
        if isinstance(exc, changes.Conflict):
            return conflict_response(exc)
        if isinstance(exc, changes.Gone):  # deleted by a concurrent request while this one waited
            exc = NotFound(str(exc))
        return super().handle_exception(exc)

    def finalize_response(self, request, response, *args, **kwargs):
        response = super().finalize_response(request, response, *args, **kwargs)
        outcome = getattr(self, "_outcome", None)
        if outcome is not None and 200 <= response.status_code < 300:
            # The revision this write produced (not re-read: another user may have written since).
            response["ETag"] = f'"{outcome.revision}"'
            if isinstance(response.data, dict):
                response.data.update(revision=outcome.revision, delta=self.delta(outcome))
        document = getattr(self, "_document", None)
        if document and 200 <= response.status_code < 300 and "ETag" not in response:
            revision = self._known_revision if request.method in ("GET", "HEAD") else self._written_revision
            if revision is None:
                revision = document[0].objects.filter(pk=document[1]).values_list("revision", flat=True).first()
            if revision is not None:  # None: the document itself was just deleted
                response["ETag"] = f'"{revision}"'
        return response

    _known_revision = None
    _written_revision = None

    def get_object(self):
        obj = super().get_object()
        self._document = self.document_of(obj)
        if isinstance(obj, self._document[0]):
            self._known_revision = obj.revision  # already loaded: no query for the ETag of a read
        return obj

    def perform_create(self, serializer):
        super().perform_create(serializer)
        self._document = self.document_of(serializer.instance)
        self._outcome = getattr(serializer, "outcome", None)

    def perform_update(self, serializer):
        super().perform_update(serializer)
        self._outcome = getattr(serializer, "outcome", None)
        if isinstance(serializer.instance, self.document_of(serializer.instance)[0]):
            # Its metadata (a status): the revision re-read in the write's transaction is this write's.
            self._written_revision = serializer.instance.revision

    def destroy_revision(self) -> int | None:
        """The If-Match revision for a delete (428 without one), or None if deletes are not versioned."""
        return expected_revision(self.request) if self.versioned_writes else None

    def _answer(self, outcome: changes.Outcome, **extra) -> Response:
        body = {
            "revision": outcome.revision,
            "change": {"id": outcome.change.pk, "summary": outcome.change.summary} if outcome.change else None,
            **extra,
            "delta": self.delta(outcome),
        }
        return Response(body, headers={"ETag": f'"{outcome.revision}"'})


class HistoryActions:
    """Undo/redo of the user's own changes, and the audit history of the document (with ``VersionedMixin``).

    ``document_kind``: "pyramid" or "annotation" (the history service's names).
    """

    document_kind = "pyramid"

    def topic_of(self, document: Model):
        """The topic of the document: its coordinators see everyone's changes."""
        raise NotImplementedError

    def _revert(self, request, redo: bool):
        document = self.get_object()
        revert = changes.redo if redo else changes.undo
        with django_errors_as_drf():
            outcome = revert(
                self.document_kind, document.pk, request.user, expected_revision=expected_revision(request)
            )
        return self._answer(outcome)

    @action(detail=True, methods=["post"])
    def undo(self, request, pk=None):
        """Undo your last change to this document (refused if what it touched changed since)."""
        return self._revert(request, redo=False)

    @action(detail=True, methods=["post"])
    def redo(self, request, pk=None):
        """Redo your last undone change."""
        return self._revert(request, redo=True)

    @extend_schema(responses=ChangeSerializer(many=True))
    @action(detail=True, methods=["get"], serializer_class=ChangeSerializer)
    def history(self, request, pk=None):
        """Who changed what, when, before and after. Coordinators see everyone's changes; others their own."""
        document = self.get_object()
        entries = Change.objects.filter(**{self.document_kind: document}).select_related("user")
        if not rules.can_change(request.user, self.topic_of(document)):
            entries = entries.filter(user=request.user)
        page = self.paginate_queryset(entries)
        return self.get_paginated_response(ChangeSerializer(page, many=True).data)
