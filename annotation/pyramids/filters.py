"""The pyramids' list filters (``annotation.api.filters``: ids are plain numbers, never looked up)."""

from annotation.api.filters import FilterSet, id_filter
from annotation.pyramids.models import SCU, Contributor, Pyramid


class PyramidFilter(FilterSet):
    dataset = id_filter("topic__dataset")
    annotator = id_filter("creator")

    class Meta:
        model = Pyramid
        fields = ["dataset", "topic", "annotator", "status"]


class SCUFilter(FilterSet):
    dataset = id_filter("pyramid__topic__dataset")
    topic = id_filter("pyramid__topic")

    class Meta:
        model = SCU
        fields = ["dataset", "topic", "pyramid", "uid"]


class ContributorFilter(FilterSet):
    dataset = id_filter("scu__pyramid__topic__dataset")
    topic = id_filter("scu__pyramid__topic")
    pyramid = id_filter("scu__pyramid")

    class Meta:
        model = Contributor
        fields = ["dataset", "topic", "pyramid", "scu", "reference"]
