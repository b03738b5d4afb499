"""The corpus's list filters (``annotation.api.filters``: ids are plain numbers, never looked up)."""

from annotation.api.filters import FilterSet, id_filter
from annotation.corpus.models import Assignment, PeerSummary, ReferenceSummary, Topic


class TopicFilter(FilterSet):
    dataset = id_filter("dataset")

    class Meta:
        model = Topic
        fields = ["dataset", "external_id"]


class ReferenceSummaryFilter(FilterSet):
    dataset = id_filter("topic__dataset")

    class Meta:
        model = ReferenceSummary
        fields = ["dataset", "topic", "external_id"]


class PeerSummaryFilter(FilterSet):
    dataset = id_filter("topic__dataset")

    class Meta:
        model = PeerSummary
        fields = ["dataset", "topic", "external_id"]


class AssignmentFilter(FilterSet):
    dataset = id_filter("topic__dataset")

    class Meta:
        model = Assignment
        fields = ["dataset", "topic", "annotator", "task", "status"]
