"""The lightweight pyramids' resources and crowd endpoint under /api/ (the router is assembled in
``pyramid_app/api_urls.py``)."""

from django.urls import re_path

from annotation.lightweight import api
from annotation.lightweight.models import CROWD_TOKEN_PATTERN

routes = [
    ("lightweight", api.LightweightPyramidViewSet, "lightweight"),
    ("lite-statements", api.LiteStatementViewSet, "lite-statement"),
    ("lite-tasks", api.LiteTaskViewSet, "lite-task"),
]
urlpatterns = [
    re_path(rf"^crowd/{CROWD_TOKEN_PATTERN}/$", api.CrowdTaskView.as_view(), name="crowd-task"),
]
