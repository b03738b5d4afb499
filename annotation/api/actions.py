"""Document versions (ETag / If-Match) and the editing actions that are not plain CRUD.

A pyramid, and a peer annotation, is edited as one document with a revision (docs/editing-api.md).
Every write to its content (SCUs, contributors, parts, matches, and the actions here) must carry
``If-Match: "<revision>"``: without it the answer is 428, with a stale one 409 listing the changes
made since; nothing is written in either case (``If-Match: *`` knowingly skips the check). Successful writes answer
with the new revision in
the ``ETag`` header (and ``revision`` in action bodies).
"""
import hashlib
import json

from django.db.models import Model
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.decorators import action
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.response import Response

from annotation.models import SCU, Change, Contributor, PeerAnnotation, PeerMatch, Pyramid
from annotation.history import changes as history
from annotation.pyramids import actions as pyramid_actions
from annotation.pyramids.models import LABEL_LENGTH
from annotation.api import deltas
from annotation.access import rules as permissions
from annotation.api.serializers import StrictMixin, django_errors_as_drf
from annotation.api.versions import expected_revision


def document_of(obj: Model) -> tuple[type[Model], int]:
    """The document (pyramid or annotation) whose revision versions ``obj``."""
    if isinstance(obj, Pyramid):
        return Pyramid, obj.pk
    if isinstance(obj, SCU):
        return Pyramid, obj.pyramid_id
    if isinstance(obj, Contributor):
        return Pyramid, obj.scu.pyramid_id
    if isinstance(obj, PeerAnnotation):
        return PeerAnnotation, obj.pk
    if isinstance(obj, PeerMatch):
        return PeerAnnotation, obj.annotation_id
    raise TypeError(f"{type(obj).__name__} is not part of a document")


def conflict_response(conflict: history.Conflict) -> Response:
    changes = [
        {"id": c.pk, "summary": c.summary, "user": c.user.username if c.user_id else None, "created_at": c.created_at}
        for c in conflict.changes
    ]
    return Response(
        {"detail": str(conflict), "revision": conflict.current_revision, "changes": changes},
        status=status.HTTP_409_CONFLICT, headers={"ETag": f'"{conflict.current_revision}"'},
    )


class VersionedMixin:
    """ETag on reads, If-Match on content writes, 409 on conflicts (for the object viewsets).

    ``versioned_writes``: whether create/update/delete of this viewset's objects needs If-Match
    (content of a document), as opposed to metadata such as a status.
    """

    versioned_writes = True

    def get_serializer_context(self):
        # Read lazily by the serializer when it writes (the browsable API builds forms with a faked method).
        return {**super().get_serializer_context(), "versioned": self.versioned_writes}

    def handle_exception(self, exc):
        if isinstance(exc, history.Conflict):
            return conflict_response(exc)
        if isinstance(exc, history.Gone):  # deleted by a concurrent request while this one waited
            exc = NotFound(str(exc))
        return super().handle_exception(exc)

    def finalize_response(self, request, response, *args, **kwargs):
        response = super().finalize_response(request, response, *args, **kwargs)
        outcome = getattr(self, "_outcome", None)
        if outcome is not None and 200 <= response.status_code < 300:
            # The revision this write produced (not re-read: another user may have written since).
            response["ETag"] = f'"{outcome.revision}"'
            if isinstance(response.data, dict):
                response.data.update(revision=outcome.revision, delta=deltas.delta(outcome))
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
        self._document = document_of(obj)
        if isinstance(obj, (Pyramid, PeerAnnotation)):
            self._known_revision = obj.revision  # already loaded: no query for the ETag of a read
        return obj

    def perform_create(self, serializer):
        super().perform_create(serializer)
        self._document = document_of(serializer.instance)
        self._outcome = getattr(serializer, "outcome", None)

    def perform_update(self, serializer):
        super().perform_update(serializer)
        self._outcome = getattr(serializer, "outcome", None)
        if isinstance(serializer.instance, (Pyramid, PeerAnnotation)):
            # Its metadata (a status): the revision re-read in the write's transaction is this write's.
            self._written_revision = serializer.instance.revision

    def destroy_revision(self) -> int | None:
        """The If-Match revision for a delete (428 without one), or None if deletes are not versioned."""
        return expected_revision(self.request) if self.versioned_writes else None


def _answer(outcome: history.Outcome, **extra) -> Response:
    body = {"revision": outcome.revision, "change": {"id": outcome.change.pk, "summary": outcome.change.summary} if outcome.change else None,
            **extra, "delta": deltas.delta(outcome)}
    return Response(body, headers={"ETag": f'"{outcome.revision}"'})


# SCUs merged in one request (a pyramid has about 100 SCUs; the bound keeps one request's work small).
MAX_MERGE_SOURCES = 100


class PartInput(StrictMixin, serializers.Serializer):
    start = serializers.IntegerField(min_value=0)
    end = serializers.IntegerField(min_value=0)


class MoveInput(StrictMixin, serializers.Serializer):
    scu = serializers.IntegerField()


class SplitInput(StrictMixin, serializers.Serializer):
    label = serializers.CharField(required=False, allow_blank=False, validators=[LABEL_LENGTH])


class MergeInput(StrictMixin, serializers.Serializer):
    sources = serializers.ListField(child=serializers.IntegerField(), allow_empty=False, max_length=MAX_MERGE_SOURCES)


def _input(serializer_class, request) -> dict:
    data = serializer_class(data=request.data)
    data.is_valid(raise_exception=True)
    return data.validated_data


def _visible_scu(request, pk: int, field: str) -> SCU:
    scu = permissions.visible(request.user, SCU.objects.filter(pk=pk)).first()
    if scu is None:
        raise ValidationError({field: [f"SCU {pk} does not exist."]})
    return scu


class ContributorActions:
    """Parts of a contributor, moving it to another SCU, splitting it off into a new SCU."""

    @action(detail=True, methods=["post"], url_path="parts")
    def add_part(self, request, pk=None):
        """Add a span of the contributor's reference as one more part (discontinuous contributor)."""
        contributor = self.get_object()
        span = _input(PartInput, request)
        with django_errors_as_drf():
            outcome = pyramid_actions.add_part_to(contributor, request.user, start=span["start"], end=span["end"], expected_revision=expected_revision(request))
        return _answer(outcome, part={"id": outcome.value.pk, "start": outcome.value.start, "end": outcome.value.end})

    @action(detail=True, methods=["delete"], url_path=r"parts/(?P<part_id>\d+)")
    def remove_part(self, request, pk=None, part_id=None):
        contributor = self.get_object()
        part = contributor.parts.filter(pk=part_id).first()
        if part is None:
            raise ValidationError({"part": [f"Part {part_id} is not a part of this contributor."]})
        with django_errors_as_drf():
            return _answer(pyramid_actions.remove_part(part, request.user, expected_revision=expected_revision(request)))

    @action(detail=True, methods=["post"])
    def move(self, request, pk=None):
        """Move the contributor to another SCU of the same pyramid (the one-per-reference rule is checked)."""
        contributor = self.get_object()
        target = _visible_scu(request, _input(MoveInput, request)["scu"], "scu")
        with django_errors_as_drf():
            return _answer(pyramid_actions.move_contributor(contributor, target, request.user, expected_revision=expected_revision(request)))

    @action(detail=True, methods=["post"])
    def split(self, request, pk=None):
        """Take the contributor out of its SCU into a new SCU (label defaults to its text)."""
        contributor = self.get_object()
        data = _input(SplitInput, request)
        with django_errors_as_drf():
            outcome = pyramid_actions.split_contributor(contributor, request.user, label=data.get("label"), expected_revision=expected_revision(request))
        return _answer(outcome, scu={"id": outcome.value.pk, "uid": outcome.value.uid, "label": outcome.value.label})


class SCUActions:
    @action(detail=True, methods=["post"])
    def merge(self, request, pk=None):
        """Merge the ``sources`` SCUs into this one;
        a reference that would contribute twice is reported, nothing changes."""
        target = self.get_object()
        sources = [_visible_scu(request, pk, "sources") for pk in _input(MergeInput, request)["sources"]]
        with django_errors_as_drf():
            return _answer(pyramid_actions.merge_scus(target, sources, request.user, expected_revision=expected_revision(request)))


class ChangeSerializer(serializers.ModelSerializer):
    user = serializers.SlugRelatedField(slug_field="username", read_only=True)

    class Meta:
        model = Change
        fields = ["id", "action", "summary", "user", "revision", "undo_state", "created_at", "before", "after"]


class HistoryActions:
    """Undo/redo of the user's own changes, and the audit history of the document.

    ``document_kind``: "pyramid" or "annotation" (the history service's names).
    """

    document_kind = "pyramid"

    def _revert(self, request, redo: bool):
        document = self.get_object()
        revert = history.redo if redo else history.undo
        with django_errors_as_drf():
            outcome = revert(self.document_kind, document.pk, request.user, expected_revision=expected_revision(request))
        return _answer(outcome)

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
        changes = Change.objects.filter(**{self.document_kind: document}).select_related("user")
        if not permissions.can_change(request.user, document.topic if isinstance(document, Pyramid) else document.pyramid.topic):
            changes = changes.filter(user=request.user)
        page = self.paginate_queryset(changes)
        return self.get_paginated_response(ChangeSerializer(page, many=True).data)


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
            return Response({"detail": "Changed since you read it: your change was not applied.", "current": current},
                            status=status.HTTP_409_CONFLICT, headers={"ETag": self.representation_etag(current)})
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
