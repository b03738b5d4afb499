"""API views: thin wrappers over querysets scoped by ``permissions`` and the services.

Changes to SCUs, contributors and peer matches go through ``pyramid_actions``/``peer_actions``
(each one locked, validated and recorded in the document's history, like the editors' actions).

Every viewset filters its queryset with ``permissions.visible`` (what you may not see is a 404)
and checks ``permissions.can_change`` / ``check_create`` before a write (what you may not do is a
403). List querysets prefetch what their serializers read, so a page costs a fixed number of
queries.
"""
from io import StringIO

from django.db.models import Count, Prefetch
from django.http import Http404
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import status, viewsets
from rest_framework.authtoken.models import Token
from rest_framework.authtoken.serializers import AuthTokenSerializer
from rest_framework.decorators import action
from rest_framework.exceptions import NotAuthenticated, ValidationError
from rest_framework.permissions import AllowAny
from rest_framework.renderers import JSONRenderer
from rest_framework.throttling import ScopedRateThrottle
from rest_framework.response import Response
from rest_framework.views import APIView

from scoring.model import Convention

from ..formats import DucViewError
from ..models import (
    SCU, AnnotationScore, Assignment, Contributor, ContributorPart, Dataset, PeerAnnotation, PeerMatch, PeerMatchPart, PeerSummary, Pyramid,
    ReferenceSummary, Topic,
)
from ..services import ducview_export, peer_actions, pyramid_actions, results, sacrerouge_export
from . import filters, permissions, serializers
from .actions import ContributorActions, HistoryActions, RepresentationVersionMixin, SCUActions, VersionedMixin
from .renderers import CSVRenderer, DUCViewRenderer, FileRenderer, SacreRougeRenderer

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


class ScopedViewSet(FormatNegotiationMixin, viewsets.ModelViewSet):
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
        serializer.save()
        self._reload(serializer)

    def perform_update(self, serializer):
        serializer.save()
        self._reload(serializer)

    def _reload(self, serializer):
        """Answer a write with the object as a read shows it (derived fields such as weight included)."""
        serializer.instance = self.base_queryset.get(pk=serializer.instance.pk)


def attachment(response: Response, filename: str) -> Response:
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


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
CONVENTION_PARAM = OpenApiParameter("convention", str, enum=[c.value for c in Convention], default=Convention.NIST.value)


class DatasetViewSet(RepresentationVersionMixin, ScopedViewSet):
    """Datasets. Only superusers create them; ``scores`` and ``agreement`` are for its coordinators."""

    base_queryset = Dataset.objects.prefetch_related("coordinators")
    serializer_class = serializers.DatasetSerializer

    def _rows(self, request, rows_of, keys, name):
        dataset = self.get_object()
        try:
            convention = Convention(request.query_params.get("convention", Convention.NIST.value))
        except ValueError:
            raise ValidationError({"convention": [f"Choose one of: {', '.join(c.value for c in Convention)}."]}) from None
        rows = rows_of(dataset.topics.all(), convention)
        if request.accepted_renderer.format == "csv":
            out = StringIO()
            results.write_rows(out, rows, keys, "csv")
            return attachment(Response(out.getvalue()), f"{name}-{dataset.pk}-{convention.value}.csv")
        return Response(rows)

    @extend_schema(parameters=[FORMAT_PARAM, CONVENTION_PARAM], responses={200: ROWS_RESPONSE})
    @action(detail=True, renderer_classes=[JSONRenderer, CSVRenderer], permission_classes=[permissions.IsCoordinatorOf])
    def scores(self, request, pk=None):
        """Scores of every peer annotation and reference summary (the keys of ``export_scores``)."""
        return self._rows(request, results.score_rows, results.SCORE_KEYS, "scores")

    @extend_schema(parameters=[FORMAT_PARAM, CONVENTION_PARAM], responses={200: ROWS_RESPONSE})
    @action(detail=True, renderer_classes=[JSONRenderer, CSVRenderer], permission_classes=[permissions.IsCoordinatorOf])
    def agreement(self, request, pk=None):
        """Agreement per topic (the keys of ``export_agreement``)."""
        return self._rows(request, results.agreement_rows, results.AGREEMENT_KEYS, "agreement")


class TopicViewSet(RepresentationVersionMixin, ScopedViewSet):
    base_queryset = Topic.objects.all()
    serializer_class = serializers.TopicSerializer
    filterset_class = filters.TopicFilter


class ReferenceSummaryViewSet(RepresentationVersionMixin, ScopedViewSet):
    base_queryset = ReferenceSummary.objects.all()
    serializer_class = serializers.ReferenceSummarySerializer
    filterset_class = filters.ReferenceSummaryFilter


class PeerSummaryViewSet(RepresentationVersionMixin, ScopedViewSet):
    base_queryset = PeerSummary.objects.all()
    serializer_class = serializers.PeerSummarySerializer
    filterset_class = filters.PeerSummaryFilter


def pyramid_content(prefix: str = "") -> list[Prefetch]:
    """Prefetches for a pyramid's references and weighted SCUs with contributors and parts (4 queries)."""
    return [
        Prefetch(f"{prefix}references", queryset=ReferenceSummary.objects.order_by("external_id")),
        Prefetch(f"{prefix}scus", queryset=WEIGHTED_SCUS.prefetch_related(
            Prefetch("contributors", queryset=Contributor.objects.order_by("reference__external_id", "id").prefetch_related(
                Prefetch("parts", queryset=ContributorPart.objects.select_related("reference").order_by("reference_id", "start")),
            )),
        )),
    ]


def nist_scores() -> Prefetch:
    return Prefetch("scores", queryset=AnnotationScore.objects.filter(convention=serializers.SCORE_CONVENTION))


class PyramidViewSet(HistoryActions, VersionedMixin, ScopedViewSet):
    versioned_writes = False  # status and references are metadata; content writes go through SCUs and contributors
    base_queryset = Pyramid.objects.prefetch_related("references")
    serializer_class = serializers.PyramidSerializer
    filterset_class = filters.PyramidFilter

    def get_queryset(self):
        if self.action in ("full", "export", "history", "undo", "redo"):
            annotations = permissions.visible(self.request.user, PeerAnnotation.objects.select_related("peer", "annotator"))
            full = Pyramid.objects.select_related("topic").prefetch_related(
                *pyramid_content(),
                Prefetch("annotations", queryset=annotations.order_by("peer__external_id", "id").prefetch_related(nist_scores()),
                         to_attr="visible_annotations"),
            )
            return permissions.visible(self.request.user, full)
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
            return attachment(Response(as_ducview(ducview_export.export_pyramid, pyramid)), f"{pyramid.topic.external_id}.{pyramid.pk}.pyr")
        if request.accepted_renderer.format == "sacrerouge":
            return attachment(Response(sacrerouge_export.pyramid_jsonl(pyramid)), sacrerouge_export.pyramid_filename(pyramid))
        return attachment(Response(self.get_serializer(pyramid).data), f"pyramid-{pyramid.pk}.json")


class SCUViewSet(SCUActions, VersionedMixin, ScopedViewSet):
    base_queryset = WEIGHTED_SCUS
    serializer_class = serializers.SCUSerializer
    filterset_class = filters.SCUFilter

    def perform_destroy(self, instance):
        """Refused (400) while peers are matched to it."""
        with serializers.django_errors_as_drf():
            pyramid_actions.delete_scu(instance, self.request.user, expected_revision=self.destroy_revision())


class ContributorViewSet(ContributorActions, VersionedMixin, ScopedViewSet):
    base_queryset = Contributor.objects.prefetch_related(Prefetch("parts", queryset=ContributorPart.objects.order_by("start")))
    serializer_class = serializers.ContributorSerializer
    filterset_class = filters.ContributorFilter

    def perform_destroy(self, instance):
        """Removing an SCU's last contributor removes the SCU (refused while peers are matched to it)."""
        with serializers.django_errors_as_drf():
            pyramid_actions.remove_contributor(instance, self.request.user, expected_revision=self.destroy_revision())


class PeerAnnotationViewSet(HistoryActions, VersionedMixin, ScopedViewSet):
    versioned_writes = False  # status is metadata; content writes go through matches
    document_kind = "annotation"
    base_queryset = PeerAnnotation.objects.all()
    serializer_class = serializers.PeerAnnotationSerializer
    filterset_class = filters.PeerAnnotationFilter
    full_queryset = PeerAnnotation.objects.select_related("peer__topic", "pyramid").prefetch_related(
        Prefetch("matches", queryset=PeerMatch.objects.order_by("id").prefetch_related(
            Prefetch("parts", queryset=PeerMatchPart.objects.order_by("start")),
        )),
        *pyramid_content("pyramid__"),
        nist_scores(),
    )

    def get_queryset(self):
        if self.action in ("full", "export"):
            return permissions.visible(self.request.user, self.full_queryset.all())
        return super().get_queryset()

    @extend_schema(responses=serializers.AnnotationFullSerializer)
    @action(detail=True, serializer_class=serializers.AnnotationFullSerializer)
    def full(self, request, pk=None):
        """Everything an annotation page needs in one request, in a fixed number of queries."""
        return Response(self.get_serializer(self.get_object()).data)

    @extend_schema(parameters=[FORMAT_PARAM], responses={200: serializers.AnnotationFullSerializer})
    @action(detail=True, renderer_classes=[JSONRenderer, DUCViewRenderer, SacreRougeRenderer], serializer_class=serializers.AnnotationFullSerializer)
    def export(self, request, pk=None):
        """The annotation as a file: ``json`` (the ``full`` document) or ``ducview`` (.pan)."""
        annotation = self.get_object()
        if request.accepted_renderer.format == "ducview":
            name = f"{annotation.peer.topic.external_id}.{annotation.peer.external_id}.{annotation.pk}.pan"
            return attachment(Response(as_ducview(ducview_export.export_annotation, annotation)), name)
        if request.accepted_renderer.format == "sacrerouge":
            return attachment(Response(sacrerouge_export.annotation_jsonl(annotation)), sacrerouge_export.annotation_filename(annotation))
        return attachment(Response(self.get_serializer(annotation).data), f"annotation-{annotation.pk}.json")


class PeerMatchViewSet(VersionedMixin, ScopedViewSet):
    base_queryset = PeerMatch.objects.prefetch_related(Prefetch("parts", queryset=PeerMatchPart.objects.order_by("start")))
    serializer_class = serializers.PeerMatchSerializer
    filterset_class = filters.PeerMatchFilter

    def perform_destroy(self, instance):
        peer_actions.remove_match(instance, self.request.user, expected_revision=self.destroy_revision())


class AssignmentViewSet(RepresentationVersionMixin, ScopedViewSet):
    base_queryset = Assignment.objects.all()
    serializer_class = serializers.AssignmentSerializer
    filterset_class = filters.AssignmentFilter


class TokenView(APIView):
    """Your API token for scripts (``Authorization: Token <key>``).

    POST returns your token, creating it on first use; authenticate with your session or token,
    or send ``username`` and ``password``. DELETE revokes it (the next POST makes a new one).
    """

    permission_classes = [AllowAny]
    throttle_classes = [ScopedRateThrottle]
    throttle_scope = "token"

    @extend_schema(request=AuthTokenSerializer, responses={200: dict, 201: dict})
    def post(self, request):
        user = request.user
        if not user.is_authenticated:
            credentials = AuthTokenSerializer(data=request.data, context={"request": request})
            credentials.is_valid(raise_exception=True)
            user = credentials.validated_data["user"]
        token, created = Token.objects.get_or_create(user=user)
        return Response({"token": token.key}, status=status.HTTP_201_CREATED if created else status.HTTP_200_OK)

    @extend_schema(request=None, responses={204: None})
    def delete(self, request):
        if not request.user.is_authenticated:
            raise NotAuthenticated()
        Token.objects.filter(user=request.user).delete()
        return Response(status=status.HTTP_204_NO_CONTENT)
