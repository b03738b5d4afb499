"""The peers' REST views: peer annotations and their matches (each change one recorded action of
``peers.actions``, like the annotator's), the annotator's work on the peers of an assignment, and
the pyramid's ``full`` read with the scores of the annotations against it.

A peer annotation with its matches is one document, versioned by its revision (``history.api``).
``PyramidScores`` and ``AssignmentPeerWork`` add actions to the pyramids' and the corpus's
resources where the router is assembled (``pyramid_app/api_urls.py``, from ``peers.urls.extends``);
the annotation resource's ``export`` comes from ``transfer.api``.
"""

from contextlib import nullcontext

from django.db import transaction
from django.db.models import Model, Prefetch, prefetch_related_objects
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.decorators import action
from rest_framework.exceptions import PermissionDenied, ValidationError
from rest_framework.response import Response

from annotation.access import rules
from annotation.api.serializers import django_errors_as_drf
from annotation.api.versions import expected_revision
from annotation.api.viewsets import ScopedViewSet
from annotation.corpus.models import Assignment, PeerSummary
from annotation.history.api import HistoryActions, VersionedMixin
from annotation.peers import actions, assignments, deltas, filters, ranked_suggestions, results, serializers
from annotation.peers.models import AnnotationScore, PeerAnnotation, PeerMatch, PeerMatchPart
from annotation.pyramids.api import pyramid_texts
from annotation.pyramids.models import Pyramid

SUGGESTIONS_RESPONSE = OpenApiResponse(
    {
        "type": "object",
        "properties": {
            "suggestions": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "scu": {"type": "integer"},
                        "source": {"type": "string", "enum": ["pyramid", "earlier"]},
                        "why": {"type": "string"},
                        "confidence": {"type": "number", "minimum": 0, "maximum": 1},
                        "parts": {
                            "type": "array",
                            "items": {
                                "type": "object",
                                "properties": {"start": {"type": "integer"}, "end": {"type": "integer"}},
                            },
                        },
                    },
                },
            }
        },
    },
    description="suggested matches, best first (highest confidence)",
)
FINISHING_PARAM = OpenApiParameter(
    "finishing",
    int,
    description="your annotation you are about to mark done (read ahead at it): the suggestions take it as "
    "finished, as they take your done ones (a sentence you left without an SCU says the SCU is not there)",
)


def _finishing(request) -> int | None:
    """The ``finishing`` query parameter: an annotation id, or None."""
    given = request.query_params.get("finishing")
    if given in (None, ""):
        return None
    if not given.isdigit():
        raise ValidationError({"finishing": f"an annotation id, not {given!r}"})
    return int(given)


def scored_annotations(annotations):
    """Of these annotations, those a pyramid's document lists the scores of (``results.counted``:
    one only opened is no score; the adjudicated version where there is one, coordinators only: it
    has no annotator), in the document's order, with what each row names."""
    return (
        results.with_version(results.counted(annotations, for_scores=True))
        .select_related("peer", "annotator")
        .order_by("peer__external_id", "id")
    )


def nist_scores() -> Prefetch:
    return Prefetch("scores", queryset=AnnotationScore.objects.filter(convention=serializers.SCORE_CONVENTION))


class AnnotationDocument:
    """A peer annotation and its matches are one document: the annotation's revision versions them,
    and an action answers with all its matches (``deltas``)."""

    def document_of(self, obj: Model) -> tuple[type[Model], int]:
        if isinstance(obj, PeerAnnotation):
            return PeerAnnotation, obj.pk
        if isinstance(obj, PeerMatch):
            return PeerAnnotation, obj.annotation_id
        raise TypeError(f"{type(obj).__name__} is not part of a peer annotation")

    def delta(self, outcome) -> dict | None:
        return deltas.delta(outcome)

    def topic_of(self, annotation: PeerAnnotation):
        return annotation.pyramid.topic


class PyramidScores:
    """The pyramid resource's ``full`` read: the pyramid with the stored scores of the annotations
    against it that the user may see (its ``export``, in ``transfer.api``, serves the same document)."""

    def get_queryset(self):
        if self.action in ("full", "export", "history", "undo", "redo"):
            annotations = rules.visible_composed(self.request.user, PeerAnnotation, scored_annotations)
            return (
                rules.visible(self.request.user, Pyramid.objects)
                .select_related("topic")
                .prefetch_related(
                    pyramid_texts(),
                    Prefetch(
                        "annotations",
                        queryset=annotations.prefetch_related(nist_scores()),
                        to_attr="visible_annotations",
                    ),
                )
            )
        return super().get_queryset()

    @extend_schema(responses=serializers.PyramidFullSerializer)
    @action(detail=True, serializer_class=serializers.PyramidFullSerializer)
    def full(self, request, pk=None):
        """Everything a pyramid page needs in one request, in a fixed number of queries."""
        return Response(self.get_serializer(self.get_object()).data)


class PeerAnnotationViewSet(AnnotationDocument, HistoryActions, VersionedMixin, ScopedViewSet):
    """Peer annotations: one annotator's judgment of which SCUs of a pyramid a peer summary expresses.

    Listed are the annotations you may see (your own; coordinators: those of their datasets), filtered
    by ``dataset``, ``topic``, ``peer``, ``pyramid``, ``annotator`` and ``status``. Status is written
    here; matches through ``matches/``. ``full/`` reads an annotation with its pyramid, ``score/`` its
    stored score; ``undo/``, ``redo/`` and ``history/`` act on the whole document."""

    versioned_writes = False  # status is metadata; content writes go through matches
    document_kind = "annotation"
    base_queryset = PeerAnnotation.objects.all()
    serializer_class = serializers.PeerAnnotationSerializer
    filterset_class = filters.PeerAnnotationFilter
    full_queryset = PeerAnnotation.objects.select_related("peer__topic", "pyramid").prefetch_related(
        Prefetch(
            "matches",
            queryset=PeerMatch.objects.order_by("id").prefetch_related(
                Prefetch("parts", queryset=PeerMatchPart.objects.order_by("start")),
            ),
        ),
        pyramid_texts("pyramid__"),
        nist_scores(),
    )

    def get_queryset(self):
        if self.action in ("full", "export"):
            return rules.visible(self.request.user, self.full_queryset.all())
        if self.action == "score":
            return rules.visible(
                self.request.user, PeerAnnotation.objects.select_related("pyramid").prefetch_related("scores")
            )
        return super().get_queryset()

    @extend_schema(responses=serializers.AnnotationFullSerializer)
    @action(detail=True, serializer_class=serializers.AnnotationFullSerializer)
    def full(self, request, pk=None):
        """Everything an annotation page needs in one request, in a fixed number of queries."""
        return Response(self.get_serializer(self.get_object()).data)

    @extend_schema(responses=serializers.StoredScoreSerializer)
    @action(detail=True, serializer_class=serializers.StoredScoreSerializer)
    def score(self, request, pk=None):
        """The stored scores (both conventions) and whether they are current: cheap to poll after a
        write until the score of the revision you hold has arrived."""
        return Response(self.get_serializer(self.get_object()).data)

    @extend_schema(parameters=[FINISHING_PARAM], responses={200: SUGGESTIONS_RESPONSE})
    @action(detail=True)
    def suggestions(self, request, pk=None):
        """Autoannotate: matches suggested from the pyramid (its contributors' and labels' words in a peer
        clause, weighted by the topic's word weights) and from the annotator's own other annotations of
        the topic (never another annotator's work), best first with a confidence (a trained model's,
        else hand-set rules'), each for the annotator to accept or reject; nothing is written."""
        return Response(
            {"suggestions": ranked_suggestions.suggestions_for(self.get_object(), finishing=_finishing(request))}
        )


ACCEPTED_RESPONSE = OpenApiResponse(
    {
        "type": "object",
        "properties": {
            "annotation": {"type": "integer"},
            "ids": {"type": "array", "items": {"type": "integer"}, "description": "the new matches, as given"},
            "revision": {"type": "integer"},
            "delta": {"type": "object", "description": "all the annotation's matches, as `full` shows them"},
        },
    },
    description="the matches made",
)
MATCH_PARTS = Prefetch("parts", queryset=PeerMatchPart.objects.order_by("start"))


class PeerMatchViewSet(AnnotationDocument, VersionedMixin, ScopedViewSet):
    """Matches of peer annotations: a peer span and the SCU it expresses (``scu`` null: a content unit
    in no SCU). Writes send the annotation's ETag as If-Match; the first match of an untouched peer
    may name its ``assignment`` and ``peer`` instead of an annotation, which it then creates."""

    base_queryset = PeerMatch.objects.prefetch_related(MATCH_PARTS)
    serializer_class = serializers.PeerMatchSerializer
    filterset_class = filters.PeerMatchFilter

    def perform_create(self, serializer):
        """The first match of an untouched peer creates its annotation in the same transaction: a
        match refused (its input, the permission check, a conflict with what another tab stored)
        leaves nothing behind."""
        place = serializer.validated_data.pop("place", None)
        if place is None:
            return super().perform_create(serializer)
        with transaction.atomic():
            serializer.validated_data["annotation"] = assignments.annotation_for(*place)
            super().perform_create(serializer)

    def _create_transaction(self):
        """None of its own: a match is written by one action, in its own transaction (or savepoint:
        ``history.changes.annotation_action``), and answered with what the action wrote and read
        under its lock (``_reload``, ``deltas.delta``): nothing is read after it, so a transaction
        around it would add only its own SAVEPOINT and RELEASE (or BEGIN and COMMIT) to each save."""
        return nullcontext()

    def _reload(self, serializer):
        """The match the action wrote or moved, as saved under the annotation's lock: a new one
        answers with the parts it was written with (``serializers.MatchParts``: nothing read, on
        every match the editor waits for), a moved one reads its parts."""
        if getattr(serializer.instance, "written_parts", None) is None:
            prefetch_related_objects([serializer.instance], MATCH_PARTS)

    @extend_schema(request=serializers.AcceptMatchesSerializer, responses={201: ACCEPTED_RESPONSE})
    @action(detail=False, methods=["post"])
    def accept(self, request):
        """Several matches in one action: the suggestions an annotator reviewed, accepted at once (one
        revision, one undo step; all are written or none). Like a single match's, the first write of
        an untouched peer may name its ``assignment`` and ``peer``, and creates the annotation with it."""
        wanted = serializers.AcceptMatchesSerializer(data=request.data, context=self.get_serializer_context())
        wanted.is_valid(raise_exception=True)
        data = wanted.validated_data
        with django_errors_as_drf(), transaction.atomic():
            annotation = data["annotation"] if "annotation" in data else assignments.annotation_for(*data["place"])
            rules.check_create(request.user, PeerMatch, {"annotation": annotation})
            self._outcome = actions.accept_matches(
                annotation,
                request.user,
                matches=[(m["scu"], m["parts"]) for m in data["matches"]],
                expected_revision=expected_revision(request),
            )
        return Response(
            {"annotation": annotation.pk, "ids": [m.pk for m in self._outcome.value]}, status=status.HTTP_201_CREATED
        )

    def perform_destroy(self, instance):
        self._outcome = actions.remove_match(instance, self.request.user, expected_revision=self.destroy_revision())


class AssignmentPeerWork:
    """An annotator's work on the peers of their assignment, before and after its annotation exists:
    the assignment resource's ``peers/{peer}/...`` actions."""

    def _own_peer(self, peer) -> tuple[Assignment, PeerSummary]:
        # Not ``get_object``: starting one's own annotation is no change to the assignment (CanChange).
        return serializers.own_peer(self.request.user, self.kwargs["pk"], peer)

    @extend_schema(responses=serializers.AnnotationFullSerializer)
    @action(detail=True, url_path=r"peers/(?P<peer>[0-9]+)/full", serializer_class=serializers.AnnotationFullSerializer)
    def peer_full(self, request, pk=None, peer=None):
        """The ``full`` annotation document of a peer of your assignment, whether or not you acted in
        it yet: built without storing anything (``id: null`` until the annotation exists; its ETag is
        then the revision a new annotation starts at, for the If-Match of the first write)."""
        assignment, peer = self._own_peer(peer)
        with django_errors_as_drf():
            annotation, peer = assignments.existing_annotation(assignment, peer)
            if (
                annotation is None
            ):  # its ETag: the revision the annotation starts at, which its first write names (If-Match)
                unsaved = assignments.unsaved_annotation(assignment, peer)
                return Response(
                    serializers.UnsavedAnnotationFullSerializer(unsaved, context=self.get_serializer_context()).data,
                    headers={"ETag": f'"{unsaved.revision}"'},
                )
        annotation = PeerAnnotationViewSet.full_queryset.get(pk=annotation.pk)
        return Response(self.get_serializer(annotation).data, headers={"ETag": f'"{annotation.revision}"'})

    @extend_schema(parameters=[FINISHING_PARAM], responses={200: SUGGESTIONS_RESPONSE})
    @action(detail=True, url_path=r"peers/(?P<peer>[0-9]+)/suggestions")
    def peer_suggestions(self, request, pk=None, peer=None):
        """Autoannotate's suggestions for a peer of your assignment, whether or not you acted in it yet."""
        assignment, peer = self._own_peer(peer)
        finishing = _finishing(request)
        with django_errors_as_drf():
            annotation, peer = assignments.existing_annotation(assignment, peer)
            return Response(
                {
                    "suggestions": ranked_suggestions.suggestions_for(
                        annotation or assignments.unsaved_annotation(assignment, peer), finishing=finishing
                    )
                }
            )

    @extend_schema(
        request=serializers.StartAnnotationInput,
        responses={200: serializers.PeerAnnotationSerializer, 201: serializers.PeerAnnotationSerializer},
    )
    @action(
        detail=True,
        methods=["post"],
        url_path=r"peers/(?P<peer>[0-9]+)/annotation",
        serializer_class=serializers.PeerAnnotationSerializer,
    )
    def peer_annotation(self, request, pk=None, peer=None):
        """Your annotation of a peer of your assignment, created on your first action in it (201)
        or the one that exists (200): once, whatever the number of tabs acting at once. With a
        ``status`` it is set in the same request ("Done" on an untouched peer: a finished annotation
        with no match, a score of 0). A first match creates it itself (POST /api/matches/ with the
        assignment and peer)."""
        assignment, peer = self._own_peer(peer)
        wanted = serializers.StartAnnotationInput(data=request.data)
        wanted.is_valid(raise_exception=True)
        with django_errors_as_drf(), transaction.atomic():
            existed = assignments.existing_annotation(assignment, peer)[0] is not None
            annotation = assignments.annotation_for(assignment, peer)
            if wanted.validated_data:
                if not rules.can_change(request.user, annotation):
                    raise PermissionDenied("You may not change this annotation.")
                update = self.get_serializer(annotation, data=wanted.validated_data, partial=True)
                update.is_valid(raise_exception=True)
                annotation = update.save()
        return Response(
            self.get_serializer(annotation).data, status=status.HTTP_200_OK if existed else status.HTTP_201_CREATED
        )
