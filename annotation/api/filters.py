"""The bases of the list filters (each concept's are in its ``filters.py``): every list can be
narrowed by the dataset and topic it belongs to, and by annotator and status where those exist
(``?dataset=1&topic=2&annotator=3&status=done``).

Every id filter is a plain number, never looked up: an id the user may not see and an id that does
not exist both narrow the (already visible-only) list to nothing, so a filter is no existence
oracle. Malformed ids are a 400 for everyone alike."""

from django import forms
from django_filters import rest_framework as filters


class IdFilter(filters.NumberFilter):
    """An object id: a whole number within the database's integer range (larger ones are a 400, not a crash)."""

    field_class = forms.IntegerField


def id_filter(path: str) -> IdFilter:
    return IdFilter(field_name=path, min_value=0, max_value=2**63 - 1)


class FilterSet(filters.FilterSet):
    """Relations listed in ``Meta.fields`` filter by id as ``_ids`` does (django-filter's default
    would check the id against every object of the related model: 400 for a missing one)."""

    @classmethod
    def filter_for_field(cls, field, field_name, lookup_expr=None):
        if field.is_relation:
            return id_filter(field_name)
        return super().filter_for_field(field, field_name, lookup_expr)


class FilterBackend(filters.DjangoFilterBackend):
    """The API's filter backend: views with only ``filterset_fields`` get the same id filters."""

    filterset_base = FilterSet
