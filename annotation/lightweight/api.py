"""API of the lightweight pyramids: runs, statements, tasks (coordinators of the dataset), and the
crowd endpoints that a crowd link's token opens (one task at a time, rate limited).

Thin views over the ``annotation.lightweight`` services; the access rule is ``permissions`` (runs, statements
and tasks are coordinator objects; crowd workers never see anything but the task handed to them).
"""

from io import StringIO

from django.db import transaction
from django.db.models import Count
from django.http import Http404
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import serializers as drf
from rest_framework import viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.parsers import FormParser, JSONParser, MultiPartParser
from rest_framework.permissions import AllowAny
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.access import rules
from annotation.api import downloads
from annotation.api.access import CanChange
from annotation.api.renderers import CSVRenderer
from annotation.api.serializers import PermissionBeforeUniquenessMixin, VisibleRelationsMixin
from annotation.api.viewsets import ROWS_RESPONSE, ScopedViewSet, attachment
from annotation.corpus.models import ReferenceSummary
from annotation.formats.lightweight_csv import Phase2Task, write_phase2_input
from annotation.lightweight import codes, importing, work
from annotation.lightweight import dashboard as lightweight_dashboard
from annotation.lightweight import scores as lightweight_scores
from annotation.lightweight.crowd_requests import CrowdThrottle, crowd_client
from annotation.lightweight.models import CrowdLink, LightweightPyramid, LiteStatement, LiteTask
from annotation.lightweight.privacy import export_worker
from annotation.lightweight.runs import touch
from annotation.pyramids.models import Pyramid

SCORE_SETTINGS = ("agreement", "threshold", "blank", "topic_filter")


class LightweightPyramidSerializer(PermissionBeforeUniquenessMixin, VisibleRelationsMixin, drf.ModelSerializer):
    class Meta:
        model = LightweightPyramid
        fields = [
            "id",
            "dataset",
            "name",
            "origin",
            "guidance",
            "agreement",
            "threshold",
            "blank",
            "topic_filter",
            "statements_per_writer",
            "writers_per_reference",
            "statements_per_reference",
            "judges_per_task",
            "seed",
            "pay_writing",
            "pay_judging",
            "prolific_code",
            "verified_only",
            "revision",
            "created_at",
            "workers_pseudonymised_at",
            "workers_deleted_at",
        ]
        read_only_fields = ["revision", "created_at", "workers_pseudonymised_at", "workers_deleted_at"]

    def validate_dataset(self, value):
        if self.instance is not None and value != self.instance.dataset:
            raise ValidationError("A lightweight pyramid stays in its dataset.")
        return value

    def validate_statements_per_writer(self, value):
        if not 1 <= value <= 16:
            raise ValidationError("Between 1 and 16 statements per writer.")
        return value


class LiteStatementSerializer(drf.ModelSerializer):
    topic = drf.CharField(source="topic.external_id", read_only=True)

    class Meta:
        model = LiteStatement
        fields = [
            "id",
            "pyramid",
            "topic",
            "external_id",
            "text",
            "reference",
            "source",
            "author",
            "scu",
            "kept",
            "filter_reason",
            "batch",
        ]
        read_only_fields = fields


class LiteTaskSerializer(drf.ModelSerializer):
    topic = drf.CharField(source="topic.external_id", read_only=True)
    peer = drf.CharField(source="peer.external_id", read_only=True)
    answers = drf.IntegerField(read_only=True)

    class Meta:
        model = LiteTask
        fields = ["id", "pyramid", "topic", "peer", "batch", "statement_ids", "answers"]
        read_only_fields = fields


def _settings_from(params) -> dict:
    out = {}
    for name in SCORE_SETTINGS:
        value = params.get(name)
        if value in (None, ""):
            continue
        if name in ("threshold", "topic_filter"):
            try:
                value = float(value)
            except ValueError:
                raise ValidationError({name: ["A number is required."]}) from None
        out[name] = value
    return out


class LightweightPyramidViewSet(ScopedViewSet):
    """Lightweight pyramids (runs) of the datasets you coordinate, and their protocol steps."""

    base_queryset = LightweightPyramid.objects.select_related("dataset")
    serializer_class = LightweightPyramidSerializer
    filterset_fields = ["dataset"]

    def perform_create(self, serializer):
        rules.check_create(self.request.user, LightweightPyramid, serializer.validated_data)
        serializer.save(created_by=self.request.user)

    def perform_update(self, serializer):
        with transaction.atomic():
            run = serializer.save()
            touch(run)  # settings may have changed: the scores are recomputed

    @extend_schema(
        parameters=[
            OpenApiParameter("level", str, enum=list(lightweight_scores.LEVELS), default="system"),
            OpenApiParameter("format", str, enum=["json", "csv"]),
            *[OpenApiParameter(n, str, required=False) for n in SCORE_SETTINGS],
            OpenApiParameter(
                "verified_only",
                bool,
                required=False,
                description="count only verified answers (default: the run's setting)",
            ),
            OpenApiParameter("workers", str, enum=["ids", "pseudonyms"], required=False),
        ],
        responses={200: ROWS_RESPONSE},
    )
    @action(detail=True, renderer_classes=[JSONRenderer, CSVRenderer])
    def scores(self, request, pk=None):
        """Rows of ``export_lightweight`` (computed now; settings parameters override the stored ones;
        every row says which answers were counted, ``counted``)."""
        run = self.get_object()
        level = request.query_params.get("level", "system")
        if level not in lightweight_scores.LEVELS:
            raise ValidationError({"level": [f"Choose one of: {', '.join(lightweight_scores.LEVELS)}."]})
        try:
            settings = lightweight_scores.settings_of(run, **_settings_from(request.query_params))
        except ValueError as error:
            raise ValidationError({"settings": [str(error)]}) from None
        rows, columns = lightweight_scores.export_rows(
            run, level, settings, _flag(request, "verified_only"), request.query_params.get("workers") == "pseudonyms"
        )
        rows, keys = downloads.with_provenance(rows, columns, downloads.provenance(**vars(settings)))
        fmt = request.accepted_renderer.format
        name = downloads.download_name(run.dataset, f"lightweight-{run.name}-{level}", fmt)
        if fmt == "csv":
            from annotation.peers.results import write_rows

            out = StringIO()
            write_rows(out, rows, keys, "csv")
            return attachment(Response(out.getvalue()), name)
        return attachment(Response(rows), name) if fmt == "json" else Response(rows)

    @extend_schema(
        responses={
            200: inline_serializer(
                "LightweightDashboard",
                {
                    "progress": drf.DictField(),
                    "costs": drf.DictField(),
                    "current": drf.BooleanField(),
                    "scores": drf.DictField(allow_null=True),
                    "comparison": drf.DictField(allow_null=True),
                },
            )
        }
    )
    @action(detail=True)
    def dashboard(self, request, pk=None):
        """Progress, costs, stored scores (workers, topic alpha, systems) and the comparison with expert scores."""
        return Response(lightweight_dashboard.dashboard(self.get_object()))

    @extend_schema(
        request={"multipart/form-data": inline_serializer("LightweightUpload", {"file": drf.FileField()})},
        responses={200: OpenApiTypes.OBJECT},
    )
    @action(detail=True, methods=["post"], parser_classes=[MultiPartParser])
    def upload(self, request, pk=None):
        """Import one file (Phase-2 results, statement list or Phase-1 results), in one transaction."""
        run = self.get_object()
        self.check_object_permissions(request, run)
        upload = request.FILES.get("file")
        if upload is None:
            raise ValidationError({"file": ["Choose a file to import."]})
        if upload.size > importing.MAX_FILE_BYTES:
            raise ValidationError({"file": ["The file is too large."]})
        try:
            text = upload.read().decode("utf-8")
        except UnicodeDecodeError:
            raise ValidationError({"file": ["The file is not UTF-8 text."]}) from None
        report = importing.import_text(run, text, upload.name)
        if report.error:
            raise ValidationError({"file": [report.error]})
        return Response({"report": report.line(), "created": {k: n for k, n in report.created.items() if n}})

    @extend_schema(request=None, responses={200: OpenApiTypes.OBJECT})
    @action(detail=True, methods=["post"], url_path="filter")
    def apply_filters(self, request, pk=None):
        """Apply the released statement filters; counts by reason."""
        run = self.get_object()
        self.check_object_permissions(request, run)
        return Response(work.apply_filters(run))

    @extend_schema(
        request=inline_serializer("LightweightSample", {"top_up": drf.BooleanField(required=False)}),
        responses={200: OpenApiTypes.OBJECT},
    )
    @action(detail=True, methods=["post"], parser_classes=[JSONParser, FormParser])
    def sample(self, request, pk=None):
        """Seeded sample into batches 1 and 2; the report lists short references (``top_up`` fills them)."""
        run = self.get_object()
        self.check_object_permissions(request, run)
        top = str(request.data.get("top_up", "")).lower() in ("1", "true", "on")
        return Response([r.__dict__ for r in work.sample(run, top_up_short=top)])

    @extend_schema(request=None, responses={200: OpenApiTypes.OBJECT})
    @action(detail=True, methods=["post"], url_path="from-expert")
    def from_expert(self, request, pk=None):
        """Statements from the SCU labels of the dataset's finished expert pyramids (one per SCU)."""
        run = self.get_object()
        self.check_object_permissions(request, run)
        pyramids = Pyramid.objects.filter(topic__dataset=run.dataset, status=Pyramid.Status.DONE)
        return Response({"created": work.statements_from_expert(run, pyramids)})

    @extend_schema(request=None, responses={200: OpenApiTypes.OBJECT})
    @action(detail=True, methods=["post"], url_path="make-tasks")
    def make_tasks(self, request, pk=None):
        """One judging task per peer summary and batch (16 statements with 4 references)."""
        run = self.get_object()
        self.check_object_permissions(request, run)
        return Response({"created": work.create_tasks(run)})

    @extend_schema(parameters=[OpenApiParameter("batch", int, required=False)], responses={200: str})
    @action(detail=True, renderer_classes=[CSVRenderer], url_path="mturk-input")
    def mturk_input(self, request, pk=None):
        """The MTurk batch file for judging: ``eventId,summaryId,qIdList,summary_text,statement_1..16``."""
        run = self.get_object()
        tasks = LiteTask.objects.filter(pyramid=run).select_related("topic", "peer").order_by("batch", "id")
        batch = request.query_params.get("batch")
        if batch:
            tasks = tasks.filter(batch=batch)
        statements = {s.pk: s for s in LiteStatement.objects.filter(pyramid=run)}
        text = write_phase2_input(
            [
                Phase2Task(
                    t.topic.external_id,
                    t.peer.external_id,
                    t.peer.text,
                    tuple((statements[s].external_id, statements[s].text) for s in t.statement_ids),
                )
                for t in tasks
            ]
        )
        return attachment(
            Response(text),
            downloads.download_name(
                run.dataset, f"lightweight-{run.name}-tasks", "csv", qualifiers=[f"batch-{batch}" if batch else ""]
            ),
        )

    @extend_schema(
        parameters=[
            OpenApiParameter("format", str, enum=["json", "csv"]),
            OpenApiParameter("workers", str, enum=["ids", "pseudonyms"], required=False),
        ],
        responses={200: ROWS_RESPONSE},
    )
    @action(detail=True, renderer_classes=[JSONRenderer, CSVRenderer], permission_classes=[rules.IsCoordinatorOf])
    def submissions(self, request, pk=None):
        """Every crowd submission made in the app with its worker, platform ids and completion code,
        and when the code was found in the platform's submissions (coordinators only)."""
        run = self.get_object()
        shown = export_worker(run, request.query_params.get("workers") == "pseudonyms")
        rows = [{**row, "worker": shown(row["worker"])} for row in codes.submissions(run)]
        if request.accepted_renderer.format == "csv":
            from annotation.peers.results import write_rows

            out = StringIO()
            write_rows(out, rows, codes.SUBMISSION_COLUMNS, "csv")
            return attachment(
                Response(out.getvalue()),
                downloads.download_name(run.dataset, f"lightweight-{run.name}-submissions", "csv"),
            )
        return Response(rows)

    @extend_schema(
        request=inline_serializer(
            "CrowdLinkCreate",
            {
                "kind": drf.ChoiceField(CrowdLink.Kind.choices),
                "batch": drf.IntegerField(required=False, allow_null=True),
            },
        ),
        responses={201: OpenApiTypes.OBJECT},
    )
    @action(detail=True, methods=["post"], parser_classes=[JSONParser, FormParser])
    def links(self, request, pk=None):
        """A shareable crowd link for statement writing or for judging one batch."""
        run = self.get_object()
        self.check_object_permissions(request, run)
        kind = request.data.get("kind")
        if kind not in CrowdLink.Kind.values:
            raise ValidationError({"kind": ["Choose writing or judging."]})
        batch = request.data.get("batch") or None
        if batch is not None:
            batch = _int(batch, "batch")
            if batch not in (1, 2):
                raise ValidationError({"batch": ["Batch 1 or 2 (or none: every batch)."]})
        link = CrowdLink.objects.create(pyramid=run, kind=kind, batch=batch)
        return Response(
            {
                "token": link.token,
                "kind": link.kind,
                "batch": link.batch,
                "url": request.build_absolute_uri(f"/lightweight/crowd/{link.token}/"),
            },
            status=201,
        )


class LiteStatementViewSet(viewsets.ReadOnlyModelViewSet):
    """Statements of the runs you coordinate, kept or dropped (with the reason) and their batch."""

    serializer_class = LiteStatementSerializer
    permission_classes = [CanChange]
    filterset_fields = ["pyramid", "kept", "batch"]

    def get_queryset(self):
        return rules.visible(self.request.user, LiteStatement.objects.select_related("topic").order_by("id"))


class LiteTaskViewSet(viewsets.ReadOnlyModelViewSet):
    """Judging tasks of the runs you coordinate, with how many answers each has."""

    serializer_class = LiteTaskSerializer
    permission_classes = [CanChange]
    filterset_fields = ["pyramid", "batch"]

    def get_queryset(self):
        queryset = (
            LiteTask.objects.select_related("topic", "peer").annotate(answers=Count("assignments")).order_by("id")
        )
        return rules.visible(self.request.user, queryset)


def crowd_link(token: str) -> CrowdLink:
    """The open crowd link of ``token`` with its run (404 otherwise)."""
    link = work.link_of(token)
    if link is None or not link.active:
        raise Http404("No such crowd link.")
    return link


class CrowdTaskView(APIView):
    """A crowd link's next piece of work for one worker (the token is the credential)."""

    permission_classes = [AllowAny]
    authentication_classes = []
    throttle_classes = [CrowdThrottle]

    @extend_schema(
        parameters=[OpenApiParameter("worker", str), OpenApiParameter("key", str, required=False)],
        responses={200: OpenApiTypes.OBJECT},
    )
    def get(self, request, token):
        """``?worker=&key=``: the worker's next task (judging: held for it
        ``LIGHTWEIGHT_RESERVATION_SECONDS`` from the first showing, the same task again until
        answered) or reference (writing), with ``key``: the worker's key, issued with its first
        piece of work and required from then on (without it, the answer a new worker would get,
        with a decoy key that holds nothing and answers nothing); ``{"done": true}`` when nothing
        is left for it; ``{"done": false, "retry_after": seconds, "detail": ...}`` (and
        ``Retry-After``) when every judging task left is held by other workers now, with status 429
        when this browser session holds as many tasks as it may (``CROWD_HOLDS_PER_SESSION``)."""
        link = crowd_link(token)
        try:
            worker = work.clean_worker_id(request.query_params.get("worker", ""))
        except work.WorkError as error:
            raise ValidationError({"worker": [str(error)]}) from None
        key, decoy = work.worker_key(link.pyramid_id, worker, request.query_params.get("key", ""))
        client = crowd_client(request, key, decoy)
        if link.kind == CrowdLink.Kind.WRITING:
            reference = work.next_reference(link.pyramid, worker, client)
            if reference is None:
                return Response({"done": True, "key": key})
            return Response(
                {
                    "kind": "writing",
                    "reference": reference.pk,
                    "text": reference.text,
                    "key": key,
                    "guidance": link.pyramid.guidance,
                    "statements": link.pyramid.statements_per_writer,
                }
            )
        try:
            task = work.next_task(link, worker, client)
        except work.HoldLimit as limit:
            return Response(
                {"done": False, "retry_after": limit.retry_after, "detail": str(limit), "key": key},
                status=429,
                headers={"Retry-After": str(limit.retry_after)},
            )
        if task is None:
            wait = work.seconds_until_free(link, worker, client)
            if wait is None:
                return Response({"done": True, "key": key})
            # Every task left is held by other workers: one may come back when a hold expires.
            return Response(
                {"done": False, "retry_after": wait, "detail": work.ALL_RESERVED, "key": key},
                headers={"Retry-After": str(wait)},
            )
        return Response(
            {
                "kind": "judging",
                "task": task.pk,
                "summary": task.peer.text,
                "key": key,
                "statements": [{"id": s.pk, "text": s.text} for s in work.task_statements(task)],
            }
        )

    @extend_schema(request=OpenApiTypes.OBJECT, responses={201: OpenApiTypes.OBJECT})
    def post(self, request, token):
        """Judging: ``{worker, key, task, answers: {statement id: "present"|"absent"}}``, only for a
        task held for the worker (GET) and with its key; writing: ``{worker, key, reference,
        statements: [...]}``. Answers the completion code."""
        link = crowd_link(token)
        data = request.data
        if not hasattr(data, "get"):
            raise ValidationError({"detail": ["A JSON object is required."]})
        client = crowd_client(request, data.get("key", ""))
        try:
            if link.kind == CrowdLink.Kind.WRITING:
                reference = get_object_or_404(
                    ReferenceSummary, pk=_int(data.get("reference"), "reference"), topic__dataset=link.pyramid.dataset
                )
                texts = data.get("statements")
                if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
                    raise ValidationError({"statements": ["A list of statements is required."]})
                done = work.submit_writing(link.pyramid, reference, data.get("worker", ""), texts, client)
            else:
                answers = data.get("answers")
                if not isinstance(answers, dict) or len(answers) > 64:
                    raise ValidationError({"answers": ["An answer per statement is required."]})
                done = work.submit_judgments(
                    link, _int(data.get("task"), "task"), data.get("worker", ""), answers, client
                )
        except work.UnknownTask:
            raise NotFound("No such task in this evaluation.") from None
        except work.WorkError as error:
            raise ValidationError({"detail": [str(error)]}) from None
        return Response({"completion_code": done.completion_code}, status=201)


def _flag(request, name: str) -> bool | None:
    value = request.query_params.get(name)
    if value in (None, ""):
        return None
    if value.lower() not in ("1", "true", "0", "false"):
        raise ValidationError({name: ["true or false."]})
    return value.lower() in ("1", "true")


def _int(value, field: str) -> int:
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise ValidationError({field: ["A number is required."]}) from None
    if not 0 <= number < 2**31:
        raise ValidationError({field: ["Out of range."]})
    return number
