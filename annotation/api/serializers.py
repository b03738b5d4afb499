"""The API's base serializers: strict about their input, validating through the models and services.

- Unknown or read-only keys are refused (a typo must not be silently ignored); keys that identify
  an object's place (its topic, pyramid, ...) cannot change after creation.
- Related ids are looked up among the objects the requesting user may see, so an id you may not
  see is "does not exist" (400), never a leak.
- Model ``clean`` rules and the editing services give field-level messages; their Django
  ``ValidationError`` becomes a 400 with the same fields.

Each concept's serializers (``annotation/<concept>/serializers.py``) build on these.
"""

from contextlib import contextmanager

from django.core.exceptions import NON_FIELD_ERRORS
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import transaction
from rest_framework import serializers
from rest_framework.settings import api_settings
from rest_framework.validators import UniqueTogetherValidator, UniqueValidator

from annotation.api import access
from annotation.api.versions import expected_revision

NON_FIELD_ERRORS_KEY = api_settings.NON_FIELD_ERRORS_KEY


@contextmanager
def django_errors_as_drf():
    """Re-raise a model/service ValidationError as DRF's, keeping its field names."""
    try:
        yield
    except DjangoValidationError as error:
        if hasattr(error, "error_dict"):
            detail = {
                (NON_FIELD_ERRORS_KEY if key == NON_FIELD_ERRORS else key): value
                for key, value in error.message_dict.items()
            }
        else:
            detail = {NON_FIELD_ERRORS_KEY: error.messages}
        raise serializers.ValidationError(detail) from error


class StrictMixin:
    """Refuse input keys that are not writable fields of this serializer."""

    def to_internal_value(self, data):
        if isinstance(data, dict):
            errors = {}
            for key in data:
                field = self.fields.get(key)
                if field is None:
                    errors[key] = ["Unknown field."]
                elif field.read_only:
                    errors[key] = ["This field is read-only."]
            if errors:
                raise serializers.ValidationError(errors)
        return super().to_internal_value(data)


class ComposedRelatedField(serializers.PrimaryKeyRelatedField):
    """A related id looked up among ``compose(the model's objects)``, for a lookup that reads more
    than the row (``compose``: a module-level function of the queryset alone, such as one adding a
    ``select_related``). Under ``VisibleRelationsMixin`` the objects the user may see are composed
    with it once per user and kept (``access.visible_composed``): composing the rule and the join
    anew for each save took 1.6 of its 3 ms of lookup CPU."""

    def __init__(self, model, compose, **kwargs):
        self.compose = compose
        super().__init__(queryset=compose(model._default_manager.all()), **kwargs)


class VisibleRelationsMixin:
    """Related ids are looked up among the objects the requesting user may see: one you may not
    see is "does not exist" (400) like one that does not exist."""

    def get_fields(self):
        fields = super().get_fields()
        request = self.context.get("request")
        for field in fields.values():
            related = getattr(field, "child_relation", field)
            queryset = getattr(related, "queryset", None)
            if request is not None and queryset is not None and access.governs(queryset.model):
                if isinstance(related, ComposedRelatedField):
                    related.queryset = access.visible_composed(request.user, queryset.model, related.compose)
                else:
                    related.queryset = access.visible(request.user, queryset)
        return fields


class PermissionBeforeUniquenessMixin:
    """On a create, who may create here is asked before any uniqueness check: a uniqueness error
    (400 for a taken name, 403 for a free one) would tell someone who may not create here the names
    of what they may not see (a hidden topic's id, another's dataset or run). The field-level unique
    validators run after the permission check, with the serializer's own ones."""

    def get_fields(self):
        fields = super().get_fields()
        self._unique_fields = {}
        for name, field in fields.items():
            unique = [v for v in field.validators if isinstance(v, UniqueValidator)]
            if unique:
                field.validators = [v for v in field.validators if not isinstance(v, UniqueValidator)]
                self._unique_fields[name] = (field, unique)
        return fields

    def run_validators(self, value):
        self.fields  # noqa: B018  (builds ``_unique_fields``)
        view, request = self.context.get("view"), self.context.get("request")
        uniqueness = self._unique_fields or any(isinstance(v, UniqueTogetherValidator) for v in self.get_validators())
        creating = self.instance is None and getattr(view, "action", None) == "create"
        if uniqueness and creating and request is not None and isinstance(value, dict):
            access.check_create(request.user, self.Meta.model, value)
        for name, (field, validators) in self._unique_fields.items():
            if field.source in value:
                try:
                    for validator in validators:
                        validator(value[field.source], field)
                except serializers.ValidationError as error:
                    raise serializers.ValidationError({name: error.detail}) from None
        super().run_validators(value)


class StrictModelSerializer(
    StrictMixin, PermissionBeforeUniquenessMixin, VisibleRelationsMixin, serializers.ModelSerializer
):
    """ModelSerializer that scopes related ids to the user, refuses moves and runs ``full_clean``.

    ``Meta.create_only``: fields that may be given on creation only (where the object lives, and
    texts that spans point into).
    """

    def to_internal_value(self, data):
        if self.instance is not None and isinstance(data, dict):
            moved = {
                key: ["Cannot be changed after creation."]
                for key in getattr(self.Meta, "create_only", ())
                if key in data
            }
            if moved:
                raise serializers.ValidationError(moved)
        return super().to_internal_value(data)

    def _save(self, instance, validated_data):
        many = {name: validated_data.pop(name) for name in list(validated_data) if name in self._many_to_many()}
        for name, value in validated_data.items():
            setattr(instance, name, value)
        with transaction.atomic():
            with django_errors_as_drf():
                instance.full_clean()
            instance.save()
            for name, value in many.items():
                getattr(instance, name).set(value)
        return instance

    def _many_to_many(self):
        return {f.name for f in self.Meta.model._meta.many_to_many}

    def create(self, validated_data):
        return self._save(self.Meta.model(), validated_data)

    def update(self, instance, validated_data):
        return self._save(instance, validated_data)


def requesting_user(serializer):
    return serializer.context["request"].user


def keep_outcome(serializer, outcome):
    """Keep the action's outcome for the view (its revision and delta go into the answer); the object."""
    serializer.outcome = outcome
    return outcome.value


def expected_revision_of(serializer) -> int | None:
    """The document revision the client last read (If-Match), checked by the action under its lock."""
    return expected_revision(serializer.context["request"]) if serializer.context.get("versioned") else None


class CanEditMixin(serializers.Serializer):
    can_edit = serializers.SerializerMethodField()

    def get_can_edit(self, obj) -> bool:
        return access.can_change(self.context["request"].user, obj)
