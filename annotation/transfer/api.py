"""Moving whole datasets in and out: DUCView uploads and the dataset archive.

- ``POST /api/datasets/{id}/import/`` (multipart/form-data, field ``files``, repeated): ``.pyr``
  and ``.pan`` files, or ``.zip`` archives of them, imported as ``import_ducview`` imports them;
  answers the import report. See ``annotation.transfer.uploads`` for the limits.
- ``GET /api/datasets/{id}/archive/``: a zip of the dataset's pyramids and annotations (NIST-like
  names, importable again), ``scores.csv``, ``agreement.csv`` and ``manifest.json``
  (``annotation.transfer.archive``).

Both are for the dataset's coordinators (and superusers): a dataset you may not see is a 404,
one you see but do not coordinate (an annotator's) is a 403.
"""

from django.conf import settings
from django.http import FileResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import APIException, ValidationError
from rest_framework.parsers import MultiPartParser
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from scoring.model import Convention

from annotation.api.choices import choose
from annotation.corpus.models import Dataset
from annotation.peers.models import PeerAnnotation
from annotation.pyramids.models import Pyramid
from annotation.transfer import archive as dataset_archive
from annotation.api import downloads
from annotation.transfer import uploads as upload_import
from annotation.access import rules as permissions


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
    topic_from = serializers.CharField(required=False, allow_null=True, help_text="file name, content, option or file stem")
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
    adjudications_restored = serializers.IntegerField(help_text="adjudicated versions of a dataset archive restored with their decisions (scores rest on them)")
    pyramid_adjudications_restored = serializers.IntegerField(help_text="adjudicated pyramids of a dataset archive restored with their decisions (their topics' scores rest on them)")
    repairs = serializers.ListField(child=serializers.CharField(), help_text="what reading the files repaired: parts relocated near their stored offsets, encodings, texts, names")
    kept = serializers.ListField(child=serializers.CharField(), help_text="parts whose label was not found, kept at their stored offsets and flagged for review (their matches and contributors count, as in the file's own scores)")
    unplaced = serializers.ListField(child=serializers.CharField(), help_text="parts left out: nothing of the text at their stored offsets (a peer match stays, flagged; a pyramid contributor goes only when no part of it is left)")
    legacy = serializers.ListField(child=serializers.CharField(), help_text="legacy rule violations kept and flagged")
    rejected = serializers.ListField(child=serializers.CharField(), help_text="files not imported, with the reason")
    annotators_created = serializers.ListField(child=serializers.CharField(), help_text="annotator identities created (inactive users that cannot log in)")
    outcomes = serializers.ListField(child=FileOutcomeSerializer(), help_text="every file's fate, and where its topic, peer and annotator came from")
    ignored = serializers.ListField(child=serializers.CharField(), help_text="archive members that are not DUCView files")


UPLOAD_SCHEMA = {
    "multipart/form-data": {
        "type": "object",
        "properties": {"files": {"type": "array", "items": {"type": "string", "format": "binary"},
                                 "description": ".pyr/.pan files or .zip archives of them"},
                       "annotators": {"type": "string", "format": "binary",
                                      "description": "optional: who annotated the peers whose file names do not say it, a text table "
                                                     "TOPIC [PEER] ANNOTATOR (see annotation.formats.annotator_table)"},
                       "users": {"type": "string", "maxLength": 50000,
                                 "description": "optional, for a dataset archive: ARCHIVE_NAME=USERNAME pairs (lines or "
                                                "commas) attributing the work the archive names to these accounts; any "
                                                "other name's work goes to an imported identity (inactive, no login)"}},
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
            raise RequestTooLarge(f"The upload is {length} bytes; at most {limit} are accepted (DATA_UPLOAD_MAX_MEMORY_SIZE).")
        super().initial(request, *args, **kwargs)

    @extend_schema(
        request=UPLOAD_SCHEMA,
        responses={
            200: ImportReportSerializer,
            400: OpenApiResponse(description="no files, a bad or unsafe zip, a file over a limit, or another kind of file: nothing "
                                             "imported (`files` says why); or some files were rejected: the import report (as for 200) "
                                             "with `detail`, where `rejected` and `outcomes` give each file's reason (the other files were "
                                             "imported, each whole)"),
            403: OpenApiResponse(description="you see the dataset but do not coordinate it"),
            404: OpenApiResponse(description="no such dataset, or you may not see it"),
            413: OpenApiResponse(description="the request is larger than DATA_UPLOAD_MAX_MEMORY_SIZE"),
        },
    )
    def post(self, request, pk):
        dataset = permissions.coordinated_dataset(request, pk)
        uploads = [upload for key in request.FILES if key != "annotators" for upload in request.FILES.getlist(key)]
        if not uploads:
            raise ValidationError({"files": ["No file: send .pyr/.pan files or .zip archives of them as multipart/form-data, field 'files'."]})
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
            body["detail"] = (f"{n} of {report.files} files {'was' if n == 1 else 'were'} rejected (see 'rejected'); "
                              "each of the others was imported whole.")
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
        parameters=[OpenApiParameter("convention", str, enum=[c.value for c in Convention], default=Convention.NIST.value,
                                     description="convention of scores.csv and agreement.csv")],
        responses={
            (200, "application/zip"): OpenApiResponse(OpenApiTypes.BINARY, description="the archive"),
            400: OpenApiResponse(description="unknown convention"),
            403: OpenApiResponse(description="you see the dataset but do not coordinate it"),
            404: OpenApiResponse(description="no such dataset, or you may not see it"),
        },
    )
    def get(self, request, pk):
        dataset = permissions.coordinated_dataset(request, pk)
        convention = Convention(choose(request.query_params, "convention", [c.value for c in Convention], Convention.NIST.value))
        user = request.user
        pyramids = permissions.visible(user, Pyramid.objects.filter(topic__dataset=dataset))
        annotations = permissions.visible(user, PeerAnnotation.objects.filter(pyramid__topic__dataset=dataset))
        spool, _ = dataset_archive.build_archive(dataset, pyramids, annotations, convention)
        return FileResponse(spool, as_attachment=True, filename=archive_filename(dataset, convention), content_type="application/zip")
