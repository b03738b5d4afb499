"""The peers' list filters (``annotation.api.filters``: ids are plain numbers, never looked up)."""

from annotation.api.filters import FilterSet, id_filter
from annotation.peers.models import PeerAnnotation, PeerMatch


class PeerAnnotationFilter(FilterSet):
    dataset = id_filter("pyramid__topic__dataset")
    topic = id_filter("pyramid__topic")

    class Meta:
        model = PeerAnnotation
        fields = ["dataset", "topic", "pyramid", "peer", "annotator", "status"]


class PeerMatchFilter(FilterSet):
    dataset = id_filter("annotation__pyramid__topic__dataset")
    topic = id_filter("annotation__pyramid__topic")
    annotator = id_filter("annotation__annotator")

    class Meta:
        model = PeerMatch
        fields = ["dataset", "topic", "annotator", "annotation", "scu"]
