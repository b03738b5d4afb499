"""The corpus's resources under /api/ (the router is assembled in ``pyramid_app/api_urls.py``)."""

from annotation.corpus import api

routes = [
    ("datasets", api.DatasetViewSet, "dataset"),
    ("topics", api.TopicViewSet, "topic"),
    ("references", api.ReferenceSummaryViewSet, "reference"),
    ("peers", api.PeerSummaryViewSet, "peer"),
    ("assignments", api.AssignmentViewSet, "assignment"),
]
