"""The API under /api/: one router for the objects, the token endpoint, the OpenAPI schema and docs."""
from django.urls import path, re_path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView
from rest_framework.routers import DefaultRouter

from annotation.lightweight.models import CROWD_TOKEN_PATTERN
from annotation.api import views
from annotation.transfer import api as transfer  # dataset import and archive
from annotation.lightweight import api as lightweight
from annotation.pyramids import api as pyramids

router = DefaultRouter()
router.register("datasets", views.DatasetViewSet, basename="dataset")
router.register("topics", views.TopicViewSet, basename="topic")
router.register("references", views.ReferenceSummaryViewSet, basename="reference")
router.register("peers", views.PeerSummaryViewSet, basename="peer")
router.register("pyramids", views.PyramidViewSet, basename="pyramid")
router.register("scus", views.SCUViewSet, basename="scu")
router.register("contributors", views.ContributorViewSet, basename="contributor")
router.register("annotations", views.PeerAnnotationViewSet, basename="annotation")
router.register("matches", views.PeerMatchViewSet, basename="match")
router.register("assignments", views.AssignmentViewSet, basename="assignment")
router.register("lightweight", lightweight.LightweightPyramidViewSet, basename="lightweight")
router.register("lite-statements", lightweight.LiteStatementViewSet, basename="lite-statement")
router.register("lite-tasks", lightweight.LiteTaskViewSet, basename="lite-task")

app_name = "api"
urlpatterns = [
    path("auth/token/", views.TokenView.as_view(), name="token"),
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    path("docs/", SpectacularSwaggerSplitView.as_view(url_name="api:schema", template_name="api/swagger_ui.html"), name="docs"),
    *router.urls,
    path("datasets/<int:pk>/import/", transfer.DatasetImportView.as_view(), name="dataset-import"),
    re_path(rf"^crowd/{CROWD_TOKEN_PATTERN}/$", lightweight.CrowdTaskView.as_view(), name="crowd-task"),
    path("datasets/<int:pk>/archive/", transfer.DatasetArchiveView.as_view(), name="dataset-archive"),
    path("datasets/<int:pk>/pyramid-agreement/", pyramids.PyramidAgreementView.as_view(), name="dataset-pyramid-agreement"),
]
