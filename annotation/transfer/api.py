"""Files in and out through the API: DUCView uploads, the dataset archive, a dataset's tables, a
pyramid's or an annotation's file.

- ``POST /api/datasets/{id}/import/`` (multipart/form-data, field ``files``, repeated): ``.pyr``
  and ``.pan`` files, or ``.zip`` archives of them, imported as ``import_ducview`` imports them;
  answers the import report. See ``annotation.transfer.uploads`` for the limits.
- ``GET /api/datasets/{id}/archive/``: a zip of the dataset's pyramids and annotations (NIST-like
  names, importable again), ``scores.csv``, ``agreement.csv`` and ``manifest.json``
  (``annotation.transfer.archive``).
- ``GET /api/datasets/{id}/scores/``, ``agreement/``, ``statistics/`` (``DatasetDownloads``): a
  dataset's tables as CSV or JSON.
- ``GET /api/datasets/{id}/pyramid-agreement/`` (``PyramidAgreementView``): the stored pyramid
  construction agreement (``pyramids.construction``): ``table=pairs`` (default) the figures of
  every compared pair of pyramids of each topic, ``table=scus`` their SCU alignment SCU by SCU;
  ``topic`` keeps one topic; ``convention`` chooses the scores of the practical test.
- ``GET /api/pyramids/{id}/export/``, ``/api/annotations/{id}/export/`` (``PyramidExport``,
  ``AnnotationExport``): one document as a JSON, DUCView or SacreROUGE file.

The dataset's files are for its coordinators (and superusers): a dataset you may not see is a
404, one you see but do not coordinate (an annotator's) is a 403.

The mixins add actions to the corpus's, pyramids' and peers' resources where the router is
assembled (``pyramid_app/api_urls.py``, from ``transfer.urls.extends``).
"""

from io import StringIO

from django.conf import settings
from django.http import FileResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.decorators import action
from rest_framework.exceptions import APIException, ValidationError
from rest_framework.parsers import MultiPartParser
from rest_framework.permissions import IsAuthenticated
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.access import rules
from annotation.adjudication.pyramids import adjudicated_pyramid_topics
from annotation.api import downloads
from annotation.api.choices import choose
from annotation.api.renderers import CSVRenderer, DUCViewRenderer, SacreRougeRenderer
from annotation.api.viewsets import FORMAT_PARAM, ROWS_RESPONSE, attachment
from annotation.corpus.models import Dataset
from annotation.dashboards import statistics as system_statistics
from annotation.dashboards.snapshots import snapshot_for
from annotation.formats import DucViewError
from annotation.peers import results
from annotation.peers.models import PeerAnnotation
from annotation.peers.serializers import AnnotationFullSerializer, PyramidFullSerializer
from annotation.pyramids import construction
from annotation.pyramids.models import Pyramid
from annotation.transfer import archive, ducview_export, sacrerouge_export
from annotation.transfer import uploads as upload_import
from scoring.model import Convention


class RequestTooLarge(APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_detail = "The request is too large."
    default_code = "request_too_large"


def max_request_bytes() -> int | None:
    """The largest upload request accepted: DATA_UPLOAD_MAX_MEMORY_SIZE (None: no limit, as Django)."""
    return settings.DATA_UPLOAD_MAX_MEMORY_SIZE


class FileOutcomeSerializer(serializers.Serializer):
    """One file of an import: what happened to it and where its names came from."""

    file = serializers.CharField()
    kind = serializers.ChoiceField(choices=["pyr", "pan"])
    status = serializers.ChoiceField(choices=["imported", "already present", "rejected"])
    reason = serializers.CharField(help_text="why it was rejected (empty otherwise)")
    topic = serializers.CharField(required=False, allow_null=True)
    topic_from = serializers.CharField(
        required=False, allow_null=True, help_text="file name, content, option or file stem"
    )
    peer = serializers.CharField(required=False, allow_null=True)
    peer_from = serializers.CharField(required=False, allow_null=True)
    annotator = serializers.CharField(required=False, allow_null=True)
    annotator_from = serializers.CharField(required=False, allow_null=True)


class ImportReportSerializer(serializers.Serializer):
    """``ImportReport.as_dict()`` of ``annotation.transfer.ducview_import``, plus what was ignored."""

    files = serializers.IntegerField(help_text="DUCView files read")
    topics = serializers.IntegerField(help_text="topics created")
    pyramids_created = serializers.IntegerField()
    pyramids_reused = serializers.IntegerField()
    scus = serializers.IntegerField(help_text="SCUs created")
    annotations_created = serializers.IntegerField()
    annotations_existing = serializers.IntegerField()
    adjudications_restored = serializers.IntegerField(
        help_text="adjudicated versions of a dataset archive restored with their decisions (scores rest on them)"
    )
    pyramid_adjudications_restored = serializers.IntegerField(
        help_text="adjudicated pyramids of a dataset archive restored with their decisions (their topics' scores "
        "rest on them)"
    )
    repairs = serializers.ListField(
        child=serializers.CharField(),
        help_text="what reading the files repaired: parts relocated near their stored offsets, encodings, texts, names",
    )
    kept = serializers.ListField(
        child=serializers.CharField(),
        help_text="parts whose label was not found, kept at their stored offsets and flagged for review (their "
        "matches and contributors count, as in the file's own scores)",
    )
    unplaced = serializers.ListField(
        child=serializers.CharField(),
        help_text="parts left out: nothing of the text at their stored offsets (a peer match stays, flagged; a "
        "pyramid contributor goes only when no part of it is left)",
    )
    legacy = serializers.ListField(child=serializers.CharField(), help_text="legacy rule violations kept and flagged")
    rejected = serializers.ListField(child=serializers.CharField(), help_text="files not imported, with the reason")
    annotators_created = serializers.ListField(
        child=serializers.CharField(), help_text="annotator identities created (inactive users that cannot log in)"
    )
    outcomes = serializers.ListField(
        child=FileOutcomeSerializer(), help_text="every file's fate, and where its topic, peer and annotator came from"
    )
    ignored = serializers.ListField(
        child=serializers.CharField(), help_text="archive members that are not DUCView files"
    )


UPLOAD_SCHEMA = {
    "multipart/form-data": {
        "type": "object",
        "properties": {
            "files": {
                "type": "array",
                "items": {"type": "string", "format": "binary"},
                "description": ".pyr/.pan files or .zip archives of them",
            },
            "annotators": {
                "type": "string",
                "format": "binary",
                "description": "optional: who annotated the peers whose file names do not say it, a text table "
                "TOPIC [PEER] ANNOTATOR (see annotation.formats.annotator_table)",
            },
            "users": {
                "type": "string",
                "maxLength": 50000,
                "description": "optional, for a dataset archive: ARCHIVE_NAME=USERNAME pairs (lines or "
                "commas) attributing the work the archive names to these accounts; any "
                "other name's work goes to an imported identity (inactive, no login)",
            },
        },
        "required": ["files"],
    }
}


class DatasetImportView(APIView):
    """Import DUCView files (``.pyr``, ``.pan``) or ``.zip`` archives of them into this dataset.

    Each file is imported in its own transaction (a rejected file writes nothing and is listed with
    the reason); re-importing adds nothing twice. Any file name imports (topic, peer and annotator
    from the NIST name, else the content, else the file stem; ``outcomes`` says which). A refused
    upload (bad zip, unsafe paths, over a size limit, another kind of file) is a 400 and imports
    nothing; a request where some files were rejected is a 400 with the full report; a request
    larger than ``DATA_UPLOAD_MAX_MEMORY_SIZE`` is a 413.
    """

    permission_classes = [IsAuthenticated]
    parser_classes = [MultiPartParser]

    def initial(self, request, *args, **kwargs):
        # Before authentication: a session's CSRF check would already read (and spool) the body.
        limit = max_request_bytes()
        try:
            length = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            length = 0
        if limit is not None and length > limit:
            raise RequestTooLarge(
                f"The upload is {length} bytes; at most {limit} are accepted (DATA_UPLOAD_MAX_MEMORY_SIZE)."
            )
        super().initial(request, *args, **kwargs)

    @extend_schema(
        request=UPLOAD_SCHEMA,
        responses={
            200: ImportReportSerializer,
            400: OpenApiResponse(
                description="no files, a bad or unsafe zip, a file over a limit, or another kind of file: nothing "
                "imported (`files` says why); or some files were rejected: the import report (as for 200) "
                "with `detail`, where `rejected` and `outcomes` give each file's reason (the other files were "
                "imported, each whole)"
            ),
            403: OpenApiResponse(description="you see the dataset but do not coordinate it"),
            404: OpenApiResponse(description="no such dataset, or you may not see it"),
            413: OpenApiResponse(description="the request is larger than DATA_UPLOAD_MAX_MEMORY_SIZE"),
        },
    )
    def post(self, request, pk):
        dataset = rules.coordinated_dataset(request, pk)
        uploads = [upload for key in request.FILES if key != "annotators" for upload in request.FILES.getlist(key)]
        if not uploads:
            raise ValidationError(
                {
                    "files": [
                        "No file: send .pyr/.pan files or .zip archives of them as multipart/form-data, field 'files'."
                    ]
                }
            )
        try:
            annotators = upload_import.read_annotator_table(request.FILES.get("annotators"))
        except upload_import.UploadRejected as error:
            raise ValidationError({"annotators": [f"{error} (nothing was imported)"]}) from None
        try:
            users = upload_import.read_user_map(request.data.get("users"))
        except upload_import.UploadRejected as error:
            raise ValidationError({"users": [f"{error} (nothing was imported)"]}) from None
        try:
            files, ignored, archived = upload_import.collect_files(uploads)
            report = upload_import.import_files(files, dataset, annotators=annotators, archived=archived, users=users)
        except upload_import.UploadRejected as error:
            raise ValidationError({"files": [f"{error} (nothing was imported)"]}) from None
        body = {**report.as_dict(), "ignored": ignored}
        if report.rejected:
            n = len(report.rejected)
            body["detail"] = (
                f"{n} of {report.files} files {'was' if n == 1 else 'were'} rejected (see 'rejected'); "
                "each of the others was imported whole."
            )
            return Response(body, status=status.HTTP_400_BAD_REQUEST)
        return Response(body)


def archive_filename(dataset: Dataset, convention: Convention) -> str:
    return downloads.download_name(dataset, "archive", "zip", convention=convention)


class DatasetArchiveView(APIView):
    """The whole dataset as a zip: every pyramid (``.pyr``) and peer annotation (``.pan``) under
    NIST-like names, ``scores.csv`` and ``agreement.csv`` (the rows of ``export_scores`` and
    ``export_agreement`` in the chosen convention) and ``manifest.json``. Importing the zip into
    another dataset gives the same scores."""

    permission_classes = [IsAuthenticated]

    @extend_schema(
        parameters=[
            OpenApiParameter(
                "convention",
                str,
                enum=[c.value for c in Convention],
                default=Convention.NIST.value,
                description="convention of scores.csv and agreement.csv",
            )
        ],
        responses={
            (200, "application/zip"): OpenApiResponse(OpenApiTypes.BINARY, description="the archive"),
            400: OpenApiResponse(description="unknown convention"),
            403: OpenApiResponse(description="you see the dataset but do not coordinate it"),
            404: OpenApiResponse(description="no such dataset, or you may not see it"),
        },
    )
    def get(self, request, pk):
        dataset = rules.coordinated_dataset(request, pk)
        convention = Convention(
            choose(request.query_params, "convention", [c.value for c in Convention], Convention.NIST.value)
        )
        user = request.user
        pyramids = rules.visible(user, Pyramid.objects.filter(topic__dataset=dataset))
        annotations = rules.visible(user, PeerAnnotation.objects.filter(pyramid__topic__dataset=dataset))
        spool, _ = archive.build_archive(dataset, pyramids, annotations, convention)
        return FileResponse(
            spool, as_attachment=True, filename=archive_filename(dataset, convention), content_type="application/zip"
        )


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


STATISTICS_TABLE_PARAM = OpenApiParameter("table", str, enum=list(system_statistics.TABLES), default="systems")
CONVENTION_PARAM = OpenApiParameter(
    "convention", str, enum=[c.value for c in Convention], default=Convention.NIST.value
)
UNFINISHED_PARAM = OpenApiParameter(
    "include_unfinished",
    bool,
    default=False,
    description="also count annotations not marked done that have at least one match (rows carry their status)",
)


class DatasetDownloads:
    """A dataset's tables as files: ``scores`` and ``agreement`` (the rows of ``export_scores`` and
    ``export_agreement``) and ``statistics`` (the stored dashboard's), for its coordinators."""

    @staticmethod
    def _convention(request) -> Convention:
        return Convention(
            choose(request.query_params, "convention", [c.value for c in Convention], Convention.NIST.value)
        )

    def _rows(self, request, rows_of, keys, name, **settings):
        dataset = self.get_object()
        convention = self._convention(request)
        unfinished = request.query_params.get("include_unfinished", "false").lower()
        if unfinished not in ("true", "false", "1", "0"):
            raise ValidationError({"include_unfinished": ["Say true or false."]})
        include_unfinished = unfinished in ("true", "1")
        rows, keys = downloads.with_provenance(
            rows_of(dataset.topics.all(), convention, include_unfinished=include_unfinished),
            keys(include_unfinished),
            downloads.provenance(convention=convention, include_unfinished=include_unfinished, **settings),
        )
        qualifiers = ["with-references"] if settings.get("references") else []
        return self._file(
            request,
            dataset,
            name,
            rows,
            keys,
            convention,
            qualifiers + (["with-unfinished"] if include_unfinished else []),
        )

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
            attachment(
                response, downloads.download_name(dataset, table, fmt, convention=convention, qualifiers=qualifiers)
            )
        return response

    @extend_schema(parameters=[FORMAT_PARAM, CONVENTION_PARAM, UNFINISHED_PARAM], responses={200: ROWS_RESPONSE})
    @action(detail=True, renderer_classes=[JSONRenderer, CSVRenderer], permission_classes=[rules.IsCoordinatorOf])
    def scores(self, request, pk=None):
        """Scores of every peer annotation and reference summary (the keys of ``export_scores``)."""
        return self._rows(request, results.score_rows, results.score_keys, "scores", references=True)

    @extend_schema(parameters=[FORMAT_PARAM, CONVENTION_PARAM, UNFINISHED_PARAM], responses={200: ROWS_RESPONSE})
    @action(detail=True, renderer_classes=[JSONRenderer, CSVRenderer], permission_classes=[rules.IsCoordinatorOf])
    def agreement(self, request, pk=None):
        """Agreement per topic (the keys of ``export_agreement``)."""
        return self._rows(
            request, results.agreement_rows, lambda include_unfinished: results.AGREEMENT_KEYS, "agreement"
        )

    @extend_schema(parameters=[FORMAT_PARAM, CONVENTION_PARAM, STATISTICS_TABLE_PARAM], responses={200: ROWS_RESPONSE})
    @action(detail=True, renderer_classes=[JSONRenderer, CSVRenderer], permission_classes=[rules.IsCoordinatorOf])
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
        rows, keys = downloads.with_provenance(
            *system_statistics.download_rows(figures, table),
            downloads.provenance(
                convention=convention,
                seed=figures["statistics"]["settings"]["seed"],
                adjudicated_pyramid_topics=adjudicated_pyramid_topics(dataset) or None,
            ),
        )
        return self._file(request, dataset, f"statistics-{table}", rows, keys, convention)


class PyramidExport:
    """The pyramid resource's ``export`` (its ``full`` document's queryset: ``peers.api.PyramidScores``)."""

    @extend_schema(parameters=[FORMAT_PARAM], responses={200: PyramidFullSerializer})
    @action(
        detail=True,
        renderer_classes=[JSONRenderer, DUCViewRenderer, SacreRougeRenderer],
        serializer_class=PyramidFullSerializer,
    )
    def export(self, request, pk=None):
        """The pyramid as a file: ``json`` (the ``full`` document) or ``ducview`` (.pyr)."""
        pyramid = self.get_object()
        if request.accepted_renderer.format == "ducview":
            return attachment(
                Response(as_ducview(ducview_export.export_pyramid, pyramid)), document_name(pyramid, "pyr")
            )
        if request.accepted_renderer.format == "sacrerouge":
            return attachment(
                Response(sacrerouge_export.pyramid_jsonl(pyramid)), document_name(pyramid, "pyramids.jsonl")
            )
        return attachment(Response(self.get_serializer(pyramid).data), document_name(pyramid, "json"))


class AnnotationExport:
    """The annotation resource's ``export`` (its ``full`` document's queryset: ``peers.api.PeerAnnotationViewSet``)."""

    @extend_schema(parameters=[FORMAT_PARAM], responses={200: AnnotationFullSerializer})
    @action(
        detail=True,
        renderer_classes=[JSONRenderer, DUCViewRenderer, SacreRougeRenderer],
        serializer_class=AnnotationFullSerializer,
    )
    def export(self, request, pk=None):
        """The annotation as a file: ``json`` (the ``full`` document) or ``ducview`` (.pan)."""
        annotation = self.get_object()
        if request.accepted_renderer.format == "ducview":
            return attachment(
                Response(as_ducview(ducview_export.export_annotation, annotation)), document_name(annotation, "pan")
            )
        if request.accepted_renderer.format == "sacrerouge":
            return attachment(
                Response(sacrerouge_export.annotation_jsonl(annotation)),
                document_name(annotation, "pyramid-annotations.jsonl"),
            )
        return attachment(Response(self.get_serializer(annotation).data), document_name(annotation, "json"))


class PyramidAgreementView(APIView):
    """Pyramid construction agreement of the dataset's topics (or of one): figures per pair of
    pyramids, or the SCU alignment of every pair. Rows say whether their figures are current."""

    permission_classes = [IsAuthenticated]
    renderer_classes = [JSONRenderer, CSVRenderer]

    @extend_schema(
        parameters=[
            OpenApiParameter("format", str, enum=["json", "csv"], description="file format"),
            OpenApiParameter("table", str, enum=list(construction.TABLES), default="pairs"),
            OpenApiParameter("topic", str, description="one topic's external id (default: every topic)"),
            OpenApiParameter(
                "convention",
                str,
                enum=[c.value for c in Convention],
                default=Convention.NIST.value,
                description="convention of the scores compared by the practical test",
            ),
        ],
        responses={
            200: OpenApiResponse(
                {"type": "array", "items": {"type": "object", "additionalProperties": True}},
                description="one object per row (JSON), or the same rows as CSV",
            ),
            400: OpenApiResponse(description="unknown table or convention"),
            403: OpenApiResponse(description="you see the dataset but do not coordinate it"),
            404: OpenApiResponse(description="no such dataset, or you may not see it"),
        },
    )
    def get(self, request, pk):
        dataset = rules.coordinated_dataset(request, pk)
        table = choose(request.query_params, "table", construction.TABLES, "pairs")
        convention = Convention(
            choose(request.query_params, "convention", [c.value for c in Convention], Convention.NIST.value)
        )
        topic = request.query_params.get("topic", "")
        agreements = construction.stored(dataset.topics.filter(external_id=topic) if topic else dataset.topics.all())
        rows, keys = downloads.with_provenance(
            *construction.table_rows(agreements, table, convention),
            downloads.provenance(convention=convention, topic=topic or None, threshold=construction.THRESHOLD),
        )
        return DatasetDownloads._file(request, dataset, f"pyramid-agreement-{table}", rows, keys, convention, [topic])
