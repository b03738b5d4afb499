"""The peers' resources under /api/, and the actions they add to lower concepts' resources (by
basename; the router is assembled in ``pyramid_app/api_urls.py``)."""

from annotation.peers import api

routes = [
    ("annotations", api.PeerAnnotationViewSet, "annotation"),
    ("matches", api.PeerMatchViewSet, "match"),
]
extends = {"pyramid": [api.PyramidScores], "assignment": [api.AssignmentPeerWork]}
