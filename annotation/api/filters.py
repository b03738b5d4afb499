"""List filters: every list can be narrowed by the dataset and topic it belongs to, and by
annotator and status where those exist (``?dataset=1&topic=2&annotator=3&status=done``).

Every id filter is a plain number, never looked up: an id the user may not see and an id that does
not exist both narrow the (already visible-only) list to nothing, so a filter is no existence
oracle. Malformed ids are a 400 for everyone alike."""
from django import forms
from django_filters import rest_framework as filters

from annotation.models import SCU, Assignment, Contributor, PeerAnnotation, PeerMatch, PeerSummary, Pyramid, ReferenceSummary, Topic


class IdFilter(filters.NumberFilter):
    """An object id: a whole number within the database's integer range (larger ones are a 400, not a crash)."""

    field_class = forms.IntegerField


def _ids(path: str) -> IdFilter:
    return IdFilter(field_name=path, min_value=0, max_value=2**63 - 1)


class FilterSet(filters.FilterSet):
    """Relations listed in ``Meta.fields`` filter by id as ``_ids`` does (django-filter's default
    would check the id against every object of the related model: 400 for a missing one)."""

    @classmethod
    def filter_for_field(cls, field, field_name, lookup_expr=None):
        if field.is_relation:
            return _ids(field_name)
        return super().filter_for_field(field, field_name, lookup_expr)


class FilterBackend(filters.DjangoFilterBackend):
    """The API's filter backend: views with only ``filterset_fields`` get the same id filters."""

    filterset_base = FilterSet


class TopicFilter(FilterSet):
    dataset = _ids("dataset")

    class Meta:
        model = Topic
        fields = ["dataset", "external_id"]


class ReferenceSummaryFilter(FilterSet):
    dataset = _ids("topic__dataset")

    class Meta:
        model = ReferenceSummary
        fields = ["dataset", "topic", "external_id"]


class PeerSummaryFilter(FilterSet):
    dataset = _ids("topic__dataset")

    class Meta:
        model = PeerSummary
        fields = ["dataset", "topic", "external_id"]


class PyramidFilter(FilterSet):
    dataset = _ids("topic__dataset")
    annotator = _ids("creator")

    class Meta:
        model = Pyramid
        fields = ["dataset", "topic", "annotator", "status"]


class SCUFilter(FilterSet):
    dataset = _ids("pyramid__topic__dataset")
    topic = _ids("pyramid__topic")

    class Meta:
        model = SCU
        fields = ["dataset", "topic", "pyramid", "uid"]


class ContributorFilter(FilterSet):
    dataset = _ids("scu__pyramid__topic__dataset")
    topic = _ids("scu__pyramid__topic")
    pyramid = _ids("scu__pyramid")

    class Meta:
        model = Contributor
        fields = ["dataset", "topic", "pyramid", "scu", "reference"]


class PeerAnnotationFilter(FilterSet):
    dataset = _ids("pyramid__topic__dataset")
    topic = _ids("pyramid__topic")

    class Meta:
        model = PeerAnnotation
        fields = ["dataset", "topic", "pyramid", "peer", "annotator", "status"]


class PeerMatchFilter(FilterSet):
    dataset = _ids("annotation__pyramid__topic__dataset")
    topic = _ids("annotation__pyramid__topic")
    annotator = _ids("annotation__annotator")

    class Meta:
        model = PeerMatch
        fields = ["dataset", "topic", "annotator", "annotation", "scu"]


class AssignmentFilter(FilterSet):
    dataset = _ids("topic__dataset")

    class Meta:
        model = Assignment
        fields = ["dataset", "topic", "annotator", "task", "status"]
