"""API views: thin wrappers over querysets scoped by ``permissions`` and the services.

Changes to SCUs, contributors and peer matches go through ``pyramid_actions``/``peer_actions``
(each one locked, validated and recorded in the document's history, like the editors' actions).

Every viewset filters its queryset with ``permissions.visible`` (what you may not see is a 404)
and checks ``permissions.can_change`` / ``check_create`` before a write (what you may not do is a
403). List querysets prefetch what their serializers read, so a page costs a fixed number of
queries.
"""
from io import StringIO

from django.db import transaction
from django.db.models import Count, Prefetch, prefetch_related_objects
from django.http import Http404
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import status, viewsets
from rest_framework.authtoken.models import Token
from rest_framework.authtoken.serializers import AuthTokenSerializer
from rest_framework.decorators import action
from rest_framework.exceptions import NotAuthenticated, PermissionDenied, ValidationError
from rest_framework.permissions import AllowAny
from rest_framework.renderers import JSONRenderer
from rest_framework.throttling import ScopedRateThrottle
from rest_framework.response import Response
from rest_framework.views import APIView

from pyramid_app.lockout import lockout_response
from scoring.model import Convention

from annotation.api.choices import choose
from annotation.formats import DucViewError
from annotation.models import (
    SCU, AnnotationScore, Assignment, Contributor, ContributorPart, Dataset, PeerAnnotation, PeerMatch, PeerMatchPart, PeerSummary, Pyramid,
    ReferenceSummary, Topic,
)
from annotation.corpus import assignments, datasets
from annotation.transfer import downloads
from annotation.transfer import ducview_export
from annotation.peers import actions as peer_actions
from annotation.pyramids import actions as pyramid_actions
from annotation.peers import results
from annotation.transfer import sacrerouge_export
from annotation.pyramids import ranked_suggestions
from annotation.adjudication import reannotation
from annotation.adjudication.pyramids import adjudicated_pyramid_topics
from annotation.dashboards import statistics as system_statistics
from annotation.dashboards.snapshots import snapshot_for
from annotation.api import filters, serializers
from annotation.access import rules as permissions
from annotation.api.actions import ContributorActions, HistoryActions, RepresentationVersionMixin, SCUActions, VersionedMixin
from annotation.api.idempotency import IdempotentPostMixin
from annotation.api.renderers import CSVRenderer, DUCViewRenderer, FileRenderer, SacreRougeRenderer
from annotation.api.throttling import CountingThrottle

WEIGHTED_SCUS = SCU.objects.annotate(weight=Count("contributors")).order_by("uid")


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

    permission_classes = [permissions.CanChange]
    # No PUT: where an object lives (its topic, pyramid, ...) is fixed at creation, so a full
    # replacement cannot be expressed; PATCH changes what may change.
    http_method_names = ["get", "post", "patch", "delete", "head", "options"]
    base_queryset = None

    def get_queryset(self):
        return permissions.visible(self.request.user, self.base_queryset.all())

    def perform_create(self, serializer):
        permissions.check_create(self.request.user, serializer.Meta.model, serializer.validated_data)
        with transaction.atomic():  # the answer is read in the write's transaction: a concurrent delete waits
            serializer.save()
            self._reload(serializer)

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


def document_name(obj, extension: str) -> str:
    """``duc2006-D0631-pyramid-12-2026-11-26.pyr``, ``duc2006-D0631-peer-14-annotation-40-2026-11-26.pan``
    (SacreROUGE's: ``....pyramids.jsonl``, ``....pyramid-annotations.jsonl``, its readers' names)."""
    if isinstance(obj, Pyramid):
        topic, table = obj.topic, f"{obj.topic.external_id}-pyramid-{obj.pk}"
    else:
        topic, table = obj.peer.topic, f"{obj.peer.topic.external_id}-peer-{obj.peer.external_id}-annotation-{obj.pk}"
    return downloads.download_name(topic.dataset, table, extension)


def as_ducview(export, obj) -> bytes:
    """The DUCView file, or a 400 saying why this object cannot be one (e.g. an SCU without contributors)."""
    try:
        return export(obj)
    except DucViewError as error:
        raise ValidationError({"format": [f"Cannot be written as DUCView: {error}"]}) from None


FORMAT_PARAM = OpenApiParameter("format", str, description="file format")
ROWS_RESPONSE = OpenApiResponse(
    {"type": "array", "items": {"type": "object", "additionalProperties": True}}, description="one object per row (JSON), or the same rows as CSV"
)
STATISTICS_TABLE_PARAM = OpenApiParameter("table", str, enum=list(system_statistics.TABLES), default="systems")
CONVENTION_PARAM = OpenApiParameter("convention", str, enum=[c.value for c in Convention], default=Convention.NIST.value)
SUGGESTIONS_RESPONSE = OpenApiResponse({"type": "object", "properties": {"suggestions": {"type": "array", "items": {
    "type": "object", "properties": {
        "scu": {"type": "integer"}, "source": {"type": "string", "enum": ["pyramid", "earlier"]}, "why": {"type": "string"},
        "confidence": {"type": "number", "minimum": 0, "maximum": 1},
        "parts": {"type": "array", "items": {"type": "object", "properties": {"start": {"type": "integer"}, "end": {"type": "integer"}}}},
    }}}}}, description="suggested matches, best first (highest confidence)")
UNFINISHED_PARAM = OpenApiParameter(
    "include_unfinished", bool, default=False,
    description="also count annotations not marked done that have at least one match (rows carry their status)")


class DatasetViewSet(RepresentationVersionMixin, ScopedViewSet):
    """Datasets. Coordinators create them and become their coordinators; ``scores`` and
    ``agreement`` are for its coordinators."""

    base_queryset = Dataset.objects.prefetch_related("coordinators")
    serializer_class = serializers.DatasetSerializer

    def perform_create(self, serializer):
        permissions.check_create(self.request.user, Dataset, serializer.validated_data)
        with transaction.atomic():
            datasets.add_creator(serializer.save(), self.request.user)
        self._reload(serializer)

    @staticmethod
    def _convention(request) -> Convention:
        return Convention(choose(request.query_params, "convention", [c.value for c in Convention], Convention.NIST.value))

    def _rows(self, request, rows_of, keys, name, **settings):
        dataset = self.get_object()
        convention = self._convention(request)
        unfinished = request.query_params.get("include_unfinished", "false").lower()
        if unfinished not in ("true", "false", "1", "0"):
            raise ValidationError({"include_unfinished": ["Say true or false."]})
        include_unfinished = unfinished in ("true", "1")
        rows, keys = downloads.with_provenance(rows_of(dataset.topics.all(), convention, include_unfinished=include_unfinished),
                                               keys(include_unfinished), downloads.provenance(convention=convention, include_unfinished=include_unfinished, **settings))
        qualifiers = ["with-references"] if settings.get("references") else []
        return self._file(request, dataset, name, rows, keys, convention, qualifiers + (["with-unfinished"] if include_unfinished else []))

    @staticmethod
    def _file(request, dataset, table: str, rows, keys, convention, qualifiers=()) -> Response:
        """Rows as CSV or JSON; a file named by ``downloads`` either way (not in the browsable API)."""
        fmt = request.accepted_renderer.format
        if fmt == "csv":
            out = StringIO()
            results.write_rows(out, rows, keys, "csv")
            response = Response(out.getvalue())
        else:
            response = Response(rows)
        if fmt in ("csv", "json"):
            attachment(response, downloads.download_name(dataset, table, fmt, convention=convention, qualifiers=qualifiers))
        return response

    @extend_schema(parameters=[FORMAT_PARAM, CONVENTION_PARAM, UNFINISHED_PARAM], responses={200: ROWS_RESPONSE})
    @action(detail=True, renderer_classes=[JSONRenderer, CSVRenderer], permission_classes=[permissions.IsCoordinatorOf])
    def scores(self, request, pk=None):
        """Scores of every peer annotation and reference summary (the keys of ``export_scores``)."""
        return self._rows(request, results.score_rows, results.score_keys, "scores", references=True)

    @extend_schema(parameters=[FORMAT_PARAM, CONVENTION_PARAM, UNFINISHED_PARAM], responses={200: ROWS_RESPONSE})
    @action(detail=True, renderer_classes=[JSONRenderer, CSVRenderer], permission_classes=[permissions.IsCoordinatorOf])
    def agreement(self, request, pk=None):
        """Agreement per topic (the keys of ``export_agreement``)."""
        return self._rows(request, results.agreement_rows, lambda include_unfinished: results.AGREEMENT_KEYS, "agreement")


    @extend_schema(parameters=[FORMAT_PARAM, CONVENTION_PARAM, STATISTICS_TABLE_PARAM], responses={200: ROWS_RESPONSE})
    @action(detail=True, renderer_classes=[JSONRenderer, CSVRenderer], permission_classes=[permissions.IsCoordinatorOf])
    def statistics(self, request, pk=None):
        """Which differences are real: one table of the stored dashboard statistics (``systems``:
        means with 95% bootstrap intervals and groups; ``pairs``: paired permutation tests with
        Holm-adjusted p-values; ``scu_tests``; ``power``; ``stability``; ``metaeval``: intervals of
        the meta-evaluation correlations). Seeds and settings are in every row, and which version the
        scores rest on: ``adjudicated`` (``adjudicated_a``/``_b``) counts those resting on an adjudicated version."""
        dataset = self.get_object()
        convention = self._convention(request)
        table = choose(request.query_params, "table", system_statistics.TABLES, "systems")
        # The API's contract is the rows (scripts do not retry): a new dataset's first snapshot is
        # computed here, once; the pages never do (``snapshot_for``).
        snapshot, _ = snapshot_for(dataset, compute_missing=True)
        figures = snapshot.data["conventions"][convention.value]
        rows, keys = downloads.with_provenance(*system_statistics.download_rows(figures, table), downloads.provenance(
            convention=convention, seed=figures["statistics"]["settings"]["seed"],
            adjudicated_pyramid_topics=adjudicated_pyramid_topics(dataset) or None))
        return self._file(request, dataset, f"statistics-{table}", rows, keys, convention)


class TopicViewSet(RepresentationVersionMixin, ScopedViewSet):
    """A dataset's topics: the unit a pyramid is built for, with its reference and peer summaries.

    Listed are the topics of the datasets you take part in (coordinators: all of theirs; annotators:
    those they are assigned); ``dataset`` filters."""
    base_queryset = Topic.objects.all()
    serializer_class = serializers.TopicSerializer
    filterset_class = filters.TopicFilter


class ReferenceSummaryViewSet(RepresentationVersionMixin, ScopedViewSet):
    """The reference summaries of topics: the human summaries a pyramid's SCUs are drawn from.

    Their text is fixed once a contributor points into it (offsets are Unicode code points)."""
    base_queryset = ReferenceSummary.objects.all()
    serializer_class = serializers.ReferenceSummarySerializer
    filterset_class = filters.ReferenceSummaryFilter


class PeerSummaryViewSet(RepresentationVersionMixin, ScopedViewSet):
    """The peer summaries of topics: the system (or held-out reference) summaries annotated against a pyramid.

    ``system_id`` groups a system's peers across topics (the system-level scores)."""
    base_queryset = PeerSummary.objects.all()
    serializer_class = serializers.PeerSummarySerializer
    filterset_class = filters.PeerSummaryFilter


def pyramid_texts(prefix: str = "") -> Prefetch:
    """The pyramid's references in name order; its SCUs are read as rows by the serializer (scu_documents)."""
    return Prefetch(f"{prefix}references", queryset=ReferenceSummary.objects.order_by("external_id"))


def scored_annotations(annotations):
    """Of these annotations, those a pyramid's document lists the scores of (``results.counted``:
    one only opened is no score; the adjudicated version where there is one, coordinators only: it
    has no annotator), in the document's order, with what each row names."""
    return (results.with_version(results.counted(annotations, for_scores=True))
            .select_related("peer", "annotator").order_by("peer__external_id", "id"))


def nist_scores() -> Prefetch:
    return Prefetch("scores", queryset=AnnotationScore.objects.filter(convention=serializers.SCORE_CONVENTION))


class PyramidViewSet(HistoryActions, VersionedMixin, ScopedViewSet):
    """Pyramids: a topic's SCUs built from its references by one annotator (``creator``).

    Status and references are metadata written here; content (SCUs, contributors) is written through
    ``scus/`` and ``contributors/``, each versioned by the pyramid's ETag. ``full/`` reads the whole
    pyramid in one request; ``undo/``, ``redo/`` and ``history/`` act on the whole document."""
    versioned_writes = False  # status and references are metadata; content writes go through SCUs and contributors
    base_queryset = Pyramid.objects.prefetch_related("references")
    serializer_class = serializers.PyramidSerializer
    filterset_class = filters.PyramidFilter

    def get_queryset(self):
        if self.action in ("full", "export", "history", "undo", "redo"):
            annotations = permissions.visible_composed(self.request.user, PeerAnnotation, scored_annotations)
            return permissions.visible(self.request.user, Pyramid.objects).select_related("topic").prefetch_related(
                pyramid_texts(),
                Prefetch("annotations", queryset=annotations.prefetch_related(nist_scores()), to_attr="visible_annotations"),
            )
        return super().get_queryset()

    @extend_schema(responses=serializers.PyramidFullSerializer)
    @action(detail=True, serializer_class=serializers.PyramidFullSerializer)
    def full(self, request, pk=None):
        """Everything a pyramid page needs in one request, in a fixed number of queries."""
        return Response(self.get_serializer(self.get_object()).data)

    @extend_schema(parameters=[FORMAT_PARAM], responses={200: serializers.PyramidFullSerializer})
    @action(detail=True, renderer_classes=[JSONRenderer, DUCViewRenderer, SacreRougeRenderer], serializer_class=serializers.PyramidFullSerializer)
    def export(self, request, pk=None):
        """The pyramid as a file: ``json`` (the ``full`` document) or ``ducview`` (.pyr)."""
        pyramid = self.get_object()
        if request.accepted_renderer.format == "ducview":
            return attachment(Response(as_ducview(ducview_export.export_pyramid, pyramid)), document_name(pyramid, "pyr"))
        if request.accepted_renderer.format == "sacrerouge":
            return attachment(Response(sacrerouge_export.pyramid_jsonl(pyramid)), document_name(pyramid, "pyramids.jsonl"))
        return attachment(Response(self.get_serializer(pyramid).data), document_name(pyramid, "json"))


class SCUViewSet(SCUActions, VersionedMixin, ScopedViewSet):
    """Summary Content Units of pyramids: a label and the contributors that express it.

    Writes send the pyramid's ETag as If-Match (409 on a conflict); ``merge/`` folds other SCUs into
    this one. Deleting an SCU is refused while peers are matched to it."""
    base_queryset = WEIGHTED_SCUS
    serializer_class = serializers.SCUSerializer
    filterset_class = filters.SCUFilter

    def perform_destroy(self, instance):
        """Refused (400) while peers are matched to it."""
        with serializers.django_errors_as_drf():
            self._outcome = pyramid_actions.delete_scu(instance, self.request.user, expected_revision=self.destroy_revision())


class ContributorViewSet(ContributorActions, VersionedMixin, ScopedViewSet):
    """Contributors of SCUs: the span(s) of one reference summary that express the SCU (several
    parts when discontinuous). Writes send the pyramid's ETag as If-Match; ``parts/``, ``move/`` and
    ``split/`` add or remove a part, move it to another SCU, or make it an SCU of its own."""
    # With its SCU: the document (pyramid) that versions a contributor is read with it.
    base_queryset = Contributor.objects.select_related("scu").prefetch_related(Prefetch("parts", queryset=ContributorPart.objects.order_by("start")))
    serializer_class = serializers.ContributorSerializer
    filterset_class = filters.ContributorFilter

    def perform_destroy(self, instance):
        """Removing an SCU's last contributor removes the SCU (refused while peers are matched to it)."""
        with serializers.django_errors_as_drf():
            self._outcome = pyramid_actions.remove_contributor(instance, self.request.user, expected_revision=self.destroy_revision())


class PeerAnnotationViewSet(HistoryActions, VersionedMixin, ScopedViewSet):
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
        Prefetch("matches", queryset=PeerMatch.objects.order_by("id").prefetch_related(
            Prefetch("parts", queryset=PeerMatchPart.objects.order_by("start")),
        )),
        pyramid_texts("pyramid__"),
        nist_scores(),
    )

    def get_queryset(self):
        if self.action in ("full", "export"):
            return permissions.visible(self.request.user, self.full_queryset.all())
        if self.action == "score":
            return permissions.visible(self.request.user, PeerAnnotation.objects.select_related("pyramid").prefetch_related("scores"))
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

    @extend_schema(responses={200: SUGGESTIONS_RESPONSE})
    @action(detail=True)
    def suggestions(self, request, pk=None):
        """Autoannotate: matches suggested from the pyramid (its contributors' and labels' words in a peer
        clause, weighted by the topic's word weights) and from the annotator's own other annotations of
        the topic (never another annotator's work), best first with a confidence (a trained model's,
        else hand-set rules'), each for the annotator to accept or reject; nothing is written."""
        return Response({"suggestions": ranked_suggestions.suggestions_for(self.get_object())})

    @extend_schema(parameters=[FORMAT_PARAM], responses={200: serializers.AnnotationFullSerializer})
    @action(detail=True, renderer_classes=[JSONRenderer, DUCViewRenderer, SacreRougeRenderer], serializer_class=serializers.AnnotationFullSerializer)
    def export(self, request, pk=None):
        """The annotation as a file: ``json`` (the ``full`` document) or ``ducview`` (.pan)."""
        annotation = self.get_object()
        if request.accepted_renderer.format == "ducview":
            return attachment(Response(as_ducview(ducview_export.export_annotation, annotation)), document_name(annotation, "pan"))
        if request.accepted_renderer.format == "sacrerouge":
            return attachment(Response(sacrerouge_export.annotation_jsonl(annotation)), document_name(annotation, "pyramid-annotations.jsonl"))
        return attachment(Response(self.get_serializer(annotation).data), document_name(annotation, "json"))


MATCH_PARTS = Prefetch("parts", queryset=PeerMatchPart.objects.order_by("start"))


class PeerMatchViewSet(VersionedMixin, ScopedViewSet):
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

    def _reload(self, serializer):
        """The match the action wrote and returned, as saved under the annotation's lock: only its
        parts are read (an answer the editor waits for, on every match)."""
        prefetch_related_objects([serializer.instance], MATCH_PARTS)

    def perform_destroy(self, instance):
        self._outcome = peer_actions.remove_match(instance, self.request.user, expected_revision=self.destroy_revision())


class AssignmentViewSet(RepresentationVersionMixin, ScopedViewSet):
    """Assignments: which annotator builds a topic's pyramid or annotates its peers.

    Coordinators create and change them; an annotator reads their own and starts a peer's
    annotation through ``peers/{peer}/annotation/``."""
    base_queryset = Assignment.objects.all()
    serializer_class = serializers.AssignmentSerializer
    filterset_class = filters.AssignmentFilter

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
        with serializers.django_errors_as_drf():
            annotation, peer = assignments.existing_annotation(assignment, peer)
            if annotation is None:  # its ETag: the revision the annotation starts at, which its first write names (If-Match)
                unsaved = assignments.unsaved_annotation(assignment, peer)
                return Response(serializers.UnsavedAnnotationFullSerializer(unsaved, context=self.get_serializer_context()).data,
                                headers={"ETag": f'"{unsaved.revision}"'})
        annotation = PeerAnnotationViewSet.full_queryset.get(pk=annotation.pk)
        return Response(self.get_serializer(annotation).data, headers={"ETag": f'"{annotation.revision}"'})

    @extend_schema(responses={200: SUGGESTIONS_RESPONSE})
    @action(detail=True, url_path=r"peers/(?P<peer>[0-9]+)/suggestions")
    def peer_suggestions(self, request, pk=None, peer=None):
        """Autoannotate's suggestions for a peer of your assignment, whether or not you acted in it yet."""
        assignment, peer = self._own_peer(peer)
        with serializers.django_errors_as_drf():
            annotation, peer = assignments.existing_annotation(assignment, peer)
            return Response({"suggestions": ranked_suggestions.suggestions_for(annotation or assignments.unsaved_annotation(assignment, peer))})

    @extend_schema(request=serializers.StartAnnotationInput, responses={200: serializers.PeerAnnotationSerializer, 201: serializers.PeerAnnotationSerializer})
    @action(detail=True, methods=["post"], url_path=r"peers/(?P<peer>[0-9]+)/annotation", serializer_class=serializers.PeerAnnotationSerializer)
    def peer_annotation(self, request, pk=None, peer=None):
        """Your annotation of a peer of your assignment, created on your first action in it (201)
        or the one that exists (200): once, whatever the number of tabs acting at once. With a
        ``status`` it is set in the same request ("Done" on an untouched peer: a finished annotation
        with no match, a score of 0). A first match creates it itself (POST /api/matches/ with the
        assignment and peer)."""
        assignment, peer = self._own_peer(peer)
        wanted = serializers.StartAnnotationInput(data=request.data)
        wanted.is_valid(raise_exception=True)
        with serializers.django_errors_as_drf(), transaction.atomic():
            existed = assignments.existing_annotation(assignment, peer)[0] is not None
            annotation = assignments.annotation_for(assignment, peer)
            if wanted.validated_data:
                if not permissions.can_change(request.user, annotation):
                    raise PermissionDenied("You may not change this annotation.")
                update = self.get_serializer(annotation, data=wanted.validated_data, partial=True)
                update.is_valid(raise_exception=True)
                annotation = update.save()
        return Response(self.get_serializer(annotation).data, status=status.HTTP_200_OK if existed else status.HTTP_201_CREATED)

    @extend_schema(request=None, responses={200: OpenApiResponse(description=(
        "{annotation, carried, present, left, message}: the annotation against the adjudicated pyramid, "
        "the matches copied, those it held already and those left for you"))})
    @action(detail=True, methods=["post"], url_path=r"peers/(?P<peer>[0-9]+)/carry-over",
            serializer_class=serializers.PeerAnnotationSerializer)
    def peer_carry_over(self, request, pk=None, peer=None):
        """Carry your matches of a peer over to the topic's adjudicated pyramid: your earlier finished
        annotation (against your pyramid, no longer scored) gives each match whose SCU maps to an
        adjudicated SCU to your annotation against the adjudicated pyramid (created if need be, left
        in progress: check it and mark it done). One recorded action, undone as any other; 400 when
        the peer has nothing to carry over."""
        assignment, peer = self._own_peer(peer)
        with serializers.django_errors_as_drf():
            result = reannotation.carry_over(assignment, peer, request.user).value
        return Response({"annotation": self.get_serializer(result.annotation).data, "carried": result.carried,
                         "present": result.present, "left": result.left, "message": reannotation.carried_text(result)})


class TokenThrottle(ScopedRateThrottle, CountingThrottle):
    """Slows password guessing; counts atomically, and (per process) while Redis is unreachable."""


class TokenView(APIView):
    """Your API token for scripts (``Authorization: Token <key>``).

    POST returns your token, creating it on first use; authenticate with your session or token,
    or send ``username`` and ``password``. DELETE revokes it (the next POST makes a new one).
    """

    permission_classes = [AllowAny]
    throttle_classes = [TokenThrottle]
    throttle_scope = "token"

    @extend_schema(request=AuthTokenSerializer, responses={200: dict, 201: dict})
    def post(self, request):
        user = request.user
        if not user.is_authenticated:
            credentials = AuthTokenSerializer(data=request.data, context={"request": request})
            if not credentials.is_valid():
                if getattr(request, "axes_locked_out", False):  # set by django-axes during authenticate()
                    return lockout_response(request)
                raise ValidationError(credentials.errors)
            user = credentials.validated_data["user"]
        token, created = Token.objects.get_or_create(user=user)
        return Response({"token": token.key}, status=status.HTTP_201_CREATED if created else status.HTTP_200_OK)

    @extend_schema(request=None, responses={204: None})
    def delete(self, request):
        if not request.user.is_authenticated:
            raise NotAuthenticated()
        Token.objects.filter(user=request.user).delete()
        return Response(status=status.HTTP_204_NO_CONTENT)
