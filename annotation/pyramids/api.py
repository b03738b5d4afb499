"""``GET /api/datasets/{id}/pyramid-agreement/``: the stored pyramid construction agreement, read only.

The rows of the dashboard's downloads (``annotation.pyramids.construction``): ``table=pairs``
(default) gives the figures of every compared pair of pyramids of each topic, ``table=scus`` their
SCU alignment SCU by SCU; ``topic`` keeps one topic; ``convention`` chooses the scores of the
practical test. JSON or CSV (``format``), named and stamped as every download
(``api.downloads``). For the dataset's coordinators (and superusers): it compares annotators'
pyramids, which annotators never see of each other; a dataset you may not see is a 404, one you
see without coordinating it a 403.
"""
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework.permissions import IsAuthenticated
from rest_framework.renderers import JSONRenderer
from rest_framework.views import APIView

from scoring.model import Convention

from annotation.api.choices import choose
from annotation.api.renderers import CSVRenderer
from annotation.api.views import DatasetViewSet
from annotation.pyramids import construction
from annotation.api import downloads
from annotation.access.rules import coordinated_dataset

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
            OpenApiParameter("convention", str, enum=[c.value for c in Convention], default=Convention.NIST.value,
                             description="convention of the scores compared by the practical test"),
        ],
        responses={
            200: OpenApiResponse({"type": "array", "items": {"type": "object", "additionalProperties": True}},
                                 description="one object per row (JSON), or the same rows as CSV"),
            400: OpenApiResponse(description="unknown table or convention"),
            403: OpenApiResponse(description="you see the dataset but do not coordinate it"),
            404: OpenApiResponse(description="no such dataset, or you may not see it"),
        },
    )
    def get(self, request, pk):
        dataset = coordinated_dataset(request, pk)
        table = choose(request.query_params, "table", construction.TABLES, "pairs")
        convention = Convention(choose(request.query_params, "convention", [c.value for c in Convention], Convention.NIST.value))
        topic = request.query_params.get("topic", "")
        agreements = construction.stored(dataset.topics.filter(external_id=topic) if topic else dataset.topics.all())
        rows, keys = downloads.with_provenance(*construction.table_rows(agreements, table, convention), downloads.provenance(
            convention=convention, topic=topic or None, threshold=construction.THRESHOLD))
        return DatasetViewSet._file(request, dataset, f"pyramid-agreement-{table}", rows, keys, convention, [topic])
