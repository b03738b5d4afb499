"""The pyramids' resources under /api/ (the router is assembled in ``pyramid_app/api_urls.py``)."""

from annotation.pyramids import api

routes = [
    ("pyramids", api.PyramidViewSet, "pyramid"),
    ("scus", api.SCUViewSet, "scu"),
    ("contributors", api.ContributorViewSet, "contributor"),
]
